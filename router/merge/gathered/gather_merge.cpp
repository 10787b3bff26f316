#include "router/merge/gathered/gather_merge.h"

#include <optional>
#include <string_view>

#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/merge/gathered/gathered_answers.h"
#include "router/merge/gathered/redis_numbers.h"
#include "router/merge/merge_errors.h"

namespace santral::router {
namespace {

using protocol::ReplyValue;
using protocol::RespWriter;
using Type = ReplyValue::Type;
using Kind = GatheredKey::Kind;

bool is_wrong_type(const ReplyValue& value) {
  return value.is_error() && value.text.starts_with("WRONGTYPE");
}

bool is_text(const ReplyValue& value) {
  return value.type == Type::BulkString || value.type == Type::SimpleString ||
         value.type == Type::VerbatimString;
}

bool is_list(const ReplyValue& value) {
  return value.type == Type::Array || value.type == Type::Set;
}

// SMEMBERS: every element a string.
bool read_members(const ReplyValue& value, GatheredKey& key) {
  if (!is_list(value)) return false;
  key.members.reserve(value.elements.size());
  for (const auto& element : value.elements) {
    if (!is_text(element)) return false;
    key.members.push_back(element.text);
  }
  key.kind = key.members.empty() ? Kind::Missing : Kind::Set;
  return true;
}

std::optional<double> read_score(const ReplyValue& value) {
  if (value.type != Type::Double && !is_text(value)) return std::nullopt;
  return redis_double(value.text);
}

// ZRANGE k 0 -1 WITHSCORES: member, score, ... (RESP2) or [member, score] pairs (RESP3).
bool read_scored(const ReplyValue& value, GatheredKey& key) {
  if (!is_list(value)) return false;
  const auto& elements = value.elements;
  bool pairs = !elements.empty() && is_list(elements[0]);
  std::size_t count = pairs ? elements.size() : elements.size() / 2;
  if (!pairs && elements.size() % 2 != 0) return false;
  key.members.reserve(count);
  key.scores.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const ReplyValue& member = pairs ? elements[i].elements.at(0) : elements[2 * i];
    const ReplyValue& score = pairs ? elements[i].elements.at(1) : elements[2 * i + 1];
    if (pairs && elements[i].elements.size() != 2) return false;
    auto parsed = read_score(score);
    if (!is_text(member) || !parsed) return false;
    key.members.push_back(member.text);
    key.scores.push_back(*parsed);
  }
  key.kind = key.members.empty() ? Kind::Missing : Kind::Zset;
  return true;
}

class GatherMerge final : public ReplyMerge {
 public:
  explicit GatherMerge(GatherBrief brief)
      : brief_(std::move(brief)),
        frames_(brief_.fragment_names.size()),
        arrived_(brief_.fragment_names.size(), false) {}

  void add(std::uint32_t fragment, std::string_view reply) override {
    if (fragment >= frames_.size()) return;
    arrived_[fragment] = true;
    received_ += reply.size();
    if (received_ > brief_.max_bytes) {
      // Past the bound nothing more is kept: the answer is the refusal.
      over_bound_ = true;
      for (auto& frame : frames_) std::string().swap(frame);
      return;
    }
    if (!over_bound_) frames_[fragment].assign(reply);
  }

  void finish(std::string& out) override {
    if (over_bound_)
      return RespWriter(out).error(
          error_message(ClientError::MergeTooLarge, brief_.command, brief_.max_bytes));
    std::vector<ReplyValue> values(frames_.size());
    for (std::uint32_t f = 0; f < frames_.size(); ++f) {
      if (!arrived_[f])
        return RespWriter(out).error(no_reply_error(brief_.fragment_names[f], brief_.command));
      if (!protocol::parse_reply(frames_[f], values[f]))
        return RespWriter(out).error(
            unexpected_reply_error(brief_.fragment_names[f], brief_.command));
    }
    // A shard that failed (down, timed out, ...) leaves no answer to compute: its error.
    for (std::uint32_t f = 0; f < frames_.size(); ++f) {
      if (values[f].is_error() && !is_wrong_type(values[f])) {
        out.append(frames_[f]);
        return;
      }
    }

    std::vector<GatheredKey> keys(brief_.key_positions.size());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      auto fetched = fetched_for<ReplyValue>(*brief_.rule, values, k);
      if (!decode_gathered_key(brief_.rule->algorithm, fetched, keys[k]))
        return RespWriter(out).error(unexpected_reply_error(
            brief_.fragment_names[first_fetch(*brief_.rule, k)], brief_.command));
    }
    std::vector<std::string_view> args(brief_.args.begin(), brief_.args.end());
    answer_gathered(brief_.rule->algorithm, GatheredInput{args, keys, brief_.protocol}, out);
  }

 private:
  GatherBrief brief_;
  std::vector<std::string> frames_;
  std::vector<bool> arrived_;
  std::size_t received_ = 0;
  bool over_bound_ = false;
};

}  // namespace

bool decode_gathered_key(GatherAlgorithm algorithm, std::span<const ReplyValue> replies,
                         GatheredKey& key) {
  const ReplyValue& first = replies[0];
  switch (algorithm) {
    case GatherAlgorithm::PfCount:
    case GatherAlgorithm::Lcs:
      if (is_wrong_type(first)) {
        key.kind = Kind::WrongType;
      } else if (first.type == Type::Null) {
        key.kind = Kind::Missing;
      } else if (is_text(first)) {
        key.kind = Kind::String;
        key.text = first.text;
      } else {
        return false;
      }
      return true;
    case GatherAlgorithm::ZUnion:
    case GatherAlgorithm::ZInter:
    case GatherAlgorithm::ZInterCard:
    case GatherAlgorithm::ZDiff: {
      // ZRANGE answers for a sorted set (or a missing key), SMEMBERS for a plain set.
      if (replies.size() < 2) return false;
      const ReplyValue& members = replies[1];
      if (!is_wrong_type(first)) return read_scored(first, key);
      if (!is_wrong_type(members)) return read_members(members, key);
      key.kind = Kind::WrongType;
      return true;
    }
    default:
      if (is_wrong_type(first)) {
        key.kind = Kind::WrongType;
        return true;
      }
      return read_members(first, key);
  }
}

std::unique_ptr<ReplyMerge> make_gather_merge(GatherBrief brief) {
  return std::make_unique<GatherMerge>(std::move(brief));
}

}  // namespace santral::router
