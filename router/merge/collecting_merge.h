#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/merge/merge_brief.h"
#include "router/merge/merge_errors.h"

namespace santral::router {

// One fragment's reply, kept until finish(), since the bytes add() sees are gone after it.
struct FragmentReply {
  FragmentReply() = default;
  FragmentReply(FragmentReply&&) = default;
  ~FragmentReply() { dismantle(value); }

  std::string frame;           // as the shard sent it
  protocol::ReplyValue value;  // views into `frame`; set in finish()
  bool arrived = false;
  bool parsed = false;  // arrived and valid RESP

 private:
  // ReplyValue's own destructor recurses once per level of nesting, and a shard may send a
  // reply nested deeper than a stack allows; take the tree apart without recursion.
  static void dismantle(protocol::ReplyValue& root) {
    std::vector<protocol::ReplyValue> pending = std::move(root.elements);
    while (!pending.empty()) {
      protocol::ReplyValue last = std::move(pending.back());
      pending.pop_back();
      for (protocol::ReplyValue& element : last.elements) pending.push_back(std::move(element));
    }
  }
};

// Base of the merges: add() keeps a copy of each reply, finish() parses them all and merges
// them in fragment order, so the order they arrived in cannot change the answer.
//
// A fragment "fails" when its shard answered with an error, or with a reply the merge cannot
// read (not valid RESP, or not the shape the command answers with). Most merges answer with
// the failure of the lowest-numbered failing fragment; write_failure() writes it.
class CollectingMerge : public ReplyMerge {
 public:
  explicit CollectingMerge(MergeBrief brief)
      : brief_(std::move(brief)), replies_(brief_.fragment_names.size()) {}

  void add(std::uint32_t fragment, std::string_view reply) final {
    if (fragment >= replies_.size()) return;  // not a fragment of this request
    replies_[fragment].frame.assign(reply);
    replies_[fragment].arrived = true;
  }

  void finish(std::string& out) final {
    if (replies_.empty()) {
      protocol::RespWriter(out).error(no_shard_error(brief_.command));
      return;
    }
    for (FragmentReply& reply : replies_)
      reply.parsed = reply.arrived && protocol::parse_reply(reply.frame, reply.value);
    merge(out);
  }

 protected:
  // Appends the client's reply to `out`; every reply is in and parsed.
  virtual void merge(std::string& out) = 0;

  const MergeBrief& brief() const { return brief_; }
  std::span<const FragmentReply> replies() const { return replies_; }
  const protocol::ReplyValue& value(std::uint32_t fragment) const {
    return replies_[fragment].value;
  }
  std::string_view shard(std::uint32_t fragment) const { return brief_.fragment_names[fragment]; }

  // `accepts(value)` says whether a non-error reply has the shape the merge needs.
  template <typename Accepts>
  bool fails(std::uint32_t fragment, Accepts accepts) const {
    const FragmentReply& reply = replies_[fragment];
    return !reply.parsed || reply.value.is_error() || !accepts(reply.value);
  }

  template <typename Accepts>
  std::optional<std::uint32_t> first_failure(Accepts accepts) const {
    for (std::uint32_t i = 0; i < replies_.size(); ++i)
      if (fails(i, accepts)) return i;
    return std::nullopt;
  }

  // The failure of a fragment as the client sees it: the shard's error unchanged, or what
  // was wrong with its reply.
  void write_failure(std::uint32_t fragment, std::string& out) const {
    const FragmentReply& reply = replies_[fragment];
    if (reply.parsed && reply.value.is_error())
      out.append(reply.frame);
    else
      protocol::RespWriter(out).error(failure_text(fragment));
  }

  // The same as text (without '-'), to quote inside another error.
  std::string failure_text(std::uint32_t fragment) const {
    const FragmentReply& reply = replies_[fragment];
    if (!reply.arrived) return no_reply_error(shard(fragment), brief_.command);
    if (reply.parsed && reply.value.is_error()) return std::string(reply.value.text);
    return unexpected_reply_error(shard(fragment), brief_.command);
  }

  // Every shard answered the very same error (FUNCTION LOAD of a bad library, a syntax
  // error): the client gets it as one Redis would have sent it.
  bool all_same_error() const {
    for (const auto& reply : replies_)
      if (!reply.parsed || !reply.value.is_error() || reply.frame != replies_.front().frame)
        return false;
    return !replies_.empty();
  }

  // For the commands that must succeed everywhere: if any fragment fails, writes one error
  // naming every failing shard and quoting the first failure (or, when every shard answered
  // the same error, that error unchanged), and returns true.
  template <typename Accepts>
  bool write_failed_shards(Accepts accepts, std::string& out) const {
    if (all_same_error()) {
      out.append(replies_.front().frame);
      return true;
    }
    std::vector<std::string_view> failed;
    std::optional<std::uint32_t> first;
    for (std::uint32_t i = 0; i < replies_.size(); ++i) {
      if (!fails(i, accepts)) continue;
      if (!first) first = i;
      failed.push_back(shard(i));
    }
    if (!first) return false;
    std::string text = failure_text(*first);
    // A shard busy with a script: Redis's BUSY first (clients match it), then where.
    if (text.starts_with("BUSY ")) {
      protocol::RespWriter(out).error(
          busy_on_shards_error(text, brief_.command, failed, failed.size() < replies_.size()));
      return true;
    }
    protocol::RespWriter(out).error(failed_on_shards_error(brief_.command, failed, text));
    return true;
  }

 private:
  MergeBrief brief_;
  std::vector<FragmentReply> replies_;
};

inline bool accepts_any(const protocol::ReplyValue&) {
  return true;
}

}  // namespace santral::router
