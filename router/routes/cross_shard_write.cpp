// The write forms across shards, with `cross_shard_writes: allow`: a read, a write and (for
// moves) a delete, each stage sent when the one before has answered. Not atomic: another
// client may see the destination written and the source not yet deleted, and a shard failing
// between stages leaves the earlier stages done.
//
//   SUNIONSTORE d a b         d on shard0, a on shard1, b on shard2
//     stage 0: SMEMBERS a -> shard1, SMEMBERS b -> shard2      (read)
//     stage 1: MULTI, DEL d, SADD d m..., EXEC -> shard0        (write; DEL d when empty)
//     answer:  the count, as Redis
//   RENAME a b                a on shard1, b on shard2
//     stage 0: DUMP a, PEXPIRETIME a -> shard1; EXISTS b -> shard2
//     stage 1: RESTORE b <ttl> <payload> REPLACE [ABSTTL] -> shard2
//     stage 2: DEL a -> shard1                                  answer: OK
//
// The request's reply slot has a fixed number of fragments: every stage's replies, plus one
// the router fills itself when the answer is known (and any a shorter path left unused). Until
// it is answered, the client's later requests wait (router/routes/staged_writes.h).
#include <boost/asio/post.hpp>
#include <boost/intrusive_ptr.hpp>

#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/merge/gathered/gather_merge.h"
#include "router/merge/gathered/gathered_answers.h"
#include "router/merge/gathered/redis_numbers.h"
#include "router/routes/routing.h"
#include "router/routes/staged_writes.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {
namespace {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::ReplyValue;
using protocol::RespWriter;
using Type = ReplyValue::Type;

// One command of a stage, for one shard.
struct Step {
  std::size_t shard;
  std::vector<std::string> args;
};

struct KeyAt {
  std::string name;
  std::size_t shard;
};

std::string error_frame(ClientError code) {
  std::string out;
  RespWriter(out).error(protocol::error_message(code));
  return out;
}

bool is_text(const ReplyValue& v) {
  return v.type == Type::BulkString || v.type == Type::SimpleString ||
         v.type == Type::VerbatimString;
}

// A score as ZADD reads it back exactly.
std::string score_text(double score) {
  std::string bulk;
  append_redis_double(bulk, score, 2);  // "$n\r\n<digits>\r\n"
  std::size_t start = bulk.find('\n') + 1;
  return bulk.substr(start, bulk.size() - start - 2);
}

class StagedWrite final : public ReplyMerge {
 public:
  StagedWrite(RequestContext& client, const WriteRule& rule, std::string command,
              std::vector<std::string> args, std::vector<KeyAt> keys, std::uint32_t fragments)
      : client_(client),
        client_id_(client.state().id),
        rule_(rule),
        command_(std::move(command)),
        args_(std::move(args)),
        keys_(std::move(keys)),
        replies_(fragments),
        fragments_(fragments),
        max_read_bytes_(client.worker().config().limits.max_merge_bytes),
        planned_(client.worker().topology_ptr()),
        write_(staged_write_started(client_id_)) {}
  StagedWrite(const StagedWrite&) = delete;
  StagedWrite& operator=(const StagedWrite&) = delete;
  ~StagedWrite() override { staged_write_ended(client_id_, write_); }

  // Fragments each command needs: every stage's replies plus the one the router fills.
  static std::uint32_t fragments_for(const WriteRule& rule, std::size_t keys) {
    switch (rule.kind) {
      case StagedWriteKind::Store:
        return static_cast<std::uint32_t>((keys - 1) * stored_read(rule).fetch.size() + 4 + 1);
      case StagedWriteKind::SetMove:
      case StagedWriteKind::ListMove:
        return 2 + 1 + 1 + 1;
      case StagedWriteKind::Rename:
        return 3 + 1 + 1 + 1;
      case StagedWriteKind::Copy:
        return 3 + 1 + 1;
    }
    return 1;
  }

  void start(std::uint64_t slot) {
    slot_ = slot;
    send(first_stage());
  }

  void add(std::uint32_t fragment, std::string_view reply) override {
    if (done_ || fragment >= replies_.size()) return;
    // What the first stage reads (the sources of a STORE, a DUMP) is held here until it is
    // written: limits.max_merge_bytes bounds it as it bounds a cross-shard read.
    if (stage() == 1) read_bytes_ += reply.size();
    if (stage() == 1 && read_bytes_ > max_read_bytes_)
      std::string().swap(replies_[fragment]);
    else
      replies_[fragment].assign(reply);
    if (--pending_ > 0) return;
    // The next stage is sent from a fresh turn of the loop: a reply may arrive inside a send
    // (a shard that is down answers at once), and the slot must not change under it.
    boost::intrusive_ptr<RequestContext> client(&client_);
    boost::asio::post(client_.worker().io(), [client, this] {
      if (!client->link().closed()) advance();
    });
  }

  void finish(std::string& out) override { out.append(answer_); }

 private:
  std::vector<Step> first_stage() const {
    const std::string& src = keys_[0].name;
    switch (rule_.kind) {
      case StagedWriteKind::Store: {
        std::vector<Step> steps;
        for (std::size_t k = 1; k < keys_.size(); ++k)
          for (const FetchCommand& fetch : stored_read(rule_).fetch) {
            Step step{keys_[k].shard, {std::string(fetch.name), keys_[k].name}};
            for (std::string_view arg : fetch.after_key) step.args.emplace_back(arg);
            steps.push_back(std::move(step));
          }
        return steps;
      }
      case StagedWriteKind::SetMove:
      case StagedWriteKind::ListMove:
        return {{keys_[0].shard, {"TYPE", src}}, {keys_[1].shard, {"TYPE", keys_[1].name}}};
      case StagedWriteKind::Rename:
      case StagedWriteKind::Copy:
        return {{keys_[0].shard, {"DUMP", src}},
                {keys_[0].shard, {"PEXPIRETIME", src}},
                {keys_[1].shard, {"EXISTS", keys_[1].name}}};
    }
    return {};
  }

  void send(std::vector<Step> steps) {
    stage_first_.push_back(next_fragment_);
    pending_ = static_cast<std::uint32_t>(steps.size());
    std::uint32_t first = next_fragment_;
    next_fragment_ += pending_;
    std::string bytes;
    std::vector<std::string_view> command;
    for (std::uint32_t i = 0; i < steps.size(); ++i) {
      auto shard = shard_now(steps[i].shard);
      if (!shard) {
        client_.deliver(slot_, first + i, shard_gone(steps[i].shard));
        continue;
      }
      command.assign(steps[i].args.begin(), steps[i].args.end());
      bytes.clear();
      RespWriter(bytes).command(command);
      client_.shared_backend(*shard).send(bytes, &client_, slot_, first + i);
    }
  }

  // The worker's number now for shard `planned` of the topology the write was planned under.
  // A later stage goes to the shard its keys were planned on (a switch of topology waits for
  // this write before anything moves), but the numbers may differ: a move's topology lists the
  // destination's shards first, so taking a shard out renumbers those after it.
  std::optional<std::size_t> shard_now(std::size_t planned) const {
    const auto& now = client_.worker().topology();
    if (&now == planned_.get()) return planned;
    return now.map->shard_at(planned_->map->shard(planned).address.text());
  }

  std::string shard_gone(std::size_t planned) const {
    const auto& shard = planned_->map->shard(planned);
    std::string out;
    RespWriter(out).error(protocol::error_message(
        ClientError::ShardUnavailable, shard.name, shard.address.text(),
        "it left the map while this " + command_ + " was half done (its earlier steps ran)"));
    return out;
  }

  // The replies of the stage just answered are in: the next stage, or the answer.
  void advance() {
    std::vector<Step> steps;
    std::optional<std::string> answer = next(steps);
    if (!answer) {
      send(std::move(steps));
      return;
    }
    answer_ = std::move(*answer);
    done_ = true;
    // The fragments left are the router's own: filling them completes the slot, and the last
    // one destroys this merge, so nothing of it is read after.
    RequestContext& client = client_;
    std::uint64_t slot = slot_;
    std::uint32_t first = next_fragment_;
    std::uint32_t end = fragments_;
    for (std::uint32_t f = first; f < end; ++f) client.deliver(slot, f, "+OK\r\n");
  }

  // Reply i of the last stage.
  const std::string& frame(std::size_t i) const { return replies_[stage_first_.back() + i]; }
  ReplyValue value(std::size_t i) const {
    ReplyValue v;
    if (!protocol::parse_reply(frame(i), v)) v.type = Type::Error;
    return v;
  }
  std::size_t stage() const { return stage_first_.size(); }
  // A stage's reply that failed (a shard down, or an error this step does not expect).
  std::optional<std::string> failure(std::size_t count, bool wrongtype_expected = false) const {
    for (std::size_t i = 0; i < count; ++i) {
      ReplyValue v = value(i);
      if (!v.is_error()) continue;
      if (wrongtype_expected && v.text.starts_with("WRONGTYPE")) continue;
      return frame(i);
    }
    return std::nullopt;
  }

  std::optional<std::string> next(std::vector<Step>& steps) {
    if (stage() == 1 && read_bytes_ > max_read_bytes_) {
      std::string out;
      RespWriter(out).error(
          protocol::error_message(ClientError::MergeTooLarge, command_, max_read_bytes_));
      return out;
    }
    switch (rule_.kind) {
      case StagedWriteKind::Store:
        return next_store(steps);
      case StagedWriteKind::SetMove:
        return next_set_move(steps);
      case StagedWriteKind::ListMove:
        return next_list_move(steps);
      case StagedWriteKind::Rename:
      case StagedWriteKind::Copy:
        return next_restore(steps);
    }
    return error_frame(ClientError::MergeInconsistentPlan);
  }

  std::optional<std::string> next_store(std::vector<Step>& steps) {
    const GatherRule& read = stored_read(rule_);
    std::size_t fetches = read.fetch.size();
    const KeyAt& dst = keys_[0];
    if (stage() == 1) {
      std::size_t sources = keys_.size() - 1;
      if (auto failed = failure(sources * fetches, true)) return failed;
      std::vector<ReplyValue> values;
      values.reserve(sources * fetches);
      for (std::size_t i = 0; i < sources * fetches; ++i) values.push_back(value(i));
      std::vector<GatheredKey> keys(sources);
      for (std::size_t k = 0; k < sources; ++k) {
        auto fetched = fetched_for<ReplyValue>(read, values, k);
        if (!decode_gathered_key(read.algorithm, fetched, keys[k]))
          return error_frame(ClientError::MergeInconsistentPlan);
      }
      std::vector<std::string_view> args(args_.begin(), args_.end());
      StoredResult result = compute_for_store(read.algorithm, args, keys);
      if (!result.error.empty()) return result.error;
      stored_ = result.members.size();
      if (result.members.empty()) {
        steps.push_back({dst.shard, {"DEL", dst.name}});
        return std::nullopt;
      }
      Step fill{dst.shard, {result.scored ? "ZADD" : "SADD", dst.name}};
      fill.args.reserve(2 + result.members.size() * (result.scored ? 2 : 1));
      for (const auto& m : result.members) {
        if (result.scored) fill.args.push_back(score_text(m.score));
        fill.args.emplace_back(m.member);
      }
      steps.push_back({dst.shard, {"MULTI"}});
      steps.push_back({dst.shard, {"DEL", dst.name}});
      steps.push_back(std::move(fill));
      steps.push_back({dst.shard, {"EXEC"}});
      return std::nullopt;
    }
    std::size_t sent = stored_ == 0 ? 1 : 4;
    if (stored_ > 0) {
      // EXEC carries the answers of DEL and SADD/ZADD.
      ReplyValue exec = value(3);
      if (exec.is_error() || exec.type != Type::Array) return frame(3);
      for (const auto& element : exec.elements)
        if (element.is_error()) return frame(3);
    } else if (auto failed = failure(sent)) {
      return failed;
    }
    std::string out;
    RespWriter(out).integer(static_cast<std::int64_t>(stored_));
    return out;
  }

  std::optional<std::string> next_set_move(std::vector<Step>& steps) {
    const KeyAt& src = keys_[0];
    const KeyAt& dst = keys_[1];
    const std::string& member = args_[3];
    switch (stage()) {
      case 1: {
        if (auto failed = failure(2)) return failed;
        ReplyValue src_type = value(0), dst_type = value(1);
        if (src_type.text == "none") return std::string(":0\r\n");
        if (src_type.text != "set" || (dst_type.text != "set" && dst_type.text != "none"))
          return error_frame(ClientError::WrongType);
        steps.push_back({src.shard, {"SREM", src.name, member}});
        return std::nullopt;
      }
      case 2: {
        if (auto failed = failure(1)) return failed;
        if (value(0).integer == 0) return std::string(":0\r\n");
        steps.push_back({dst.shard, {"SADD", dst.name, member}});
        return std::nullopt;
      }
      default:
        if (auto failed = failure(1)) return failed;
        return std::string(":1\r\n");
    }
  }

  std::optional<std::string> next_list_move(std::vector<Step>& steps) {
    const KeyAt& src = keys_[0];
    const KeyAt& dst = keys_[1];
    // LMOVE src dst LEFT|RIGHT LEFT|RIGHT; RPOPLPUSH src dst is LMOVE ... RIGHT LEFT.
    bool lmove = args_.size() == 5;
    std::string_view from = lmove ? std::string_view(args_[3]) : "RIGHT";
    std::string_view to = lmove ? std::string_view(args_[4]) : "LEFT";
    auto side = [](std::string_view where) -> std::optional<bool> {
      if (equals_nocase(where, "LEFT")) return true;
      if (equals_nocase(where, "RIGHT")) return false;
      return std::nullopt;
    };
    int protocol = client_.state().protocol;
    switch (stage()) {
      case 1: {
        if (!side(from) || !side(to)) return error_frame(ClientError::SyntaxError);
        if (auto failed = failure(2)) return failed;
        ReplyValue src_type = value(0), dst_type = value(1);
        std::string nil;
        RespWriter(nil, protocol).null();
        if (src_type.text == "none") return nil;
        if (src_type.text != "list" || (dst_type.text != "list" && dst_type.text != "none"))
          return error_frame(ClientError::WrongType);
        steps.push_back({src.shard, {*side(from) ? "LPOP" : "RPOP", src.name}});
        return std::nullopt;
      }
      case 2: {
        if (auto failed = failure(1)) return failed;
        ReplyValue popped = value(0);
        if (!is_text(popped)) return frame(0);  // nil: emptied meanwhile
        element_.assign(popped.text);
        steps.push_back({dst.shard, {*side(to) ? "LPUSH" : "RPUSH", dst.name, element_}});
        return std::nullopt;
      }
      default: {
        if (auto failed = failure(1)) return failed;
        std::string out;
        RespWriter(out, protocol).bulk(element_);
        return out;
      }
    }
  }

  // RENAME, RENAMENX, COPY: DUMP and PEXPIRETIME of the source, EXISTS of the destination; then
  // RESTORE on the destination's shard with the same absolute expiry; RENAME then deletes the
  // source.
  std::optional<std::string> next_restore(std::vector<Step>& steps) {
    const KeyAt& src = keys_[0];
    const KeyAt& dst = keys_[1];
    bool copy = rule_.kind == StagedWriteKind::Copy;
    switch (stage()) {
      case 1: {
        bool replace = !rule_.nx;
        if (copy) {
          // COPY source destination [DB n] [REPLACE]: its options come first in Redis.
          replace = false;
          for (std::size_t j = 3; j < args_.size(); ++j) {
            if (equals_nocase(args_[j], "REPLACE")) {
              replace = true;
            } else if (equals_nocase(args_[j], "DB") && j + 1 < args_.size()) {
              return error_frame(ClientError::CrossShardCopyDb);
            } else {
              return error_frame(ClientError::SyntaxError);
            }
          }
        }
        if (auto failed = failure(3)) return failed;
        ReplyValue dump = value(0);
        if (dump.type == Type::Null)
          return copy ? std::string(":0\r\n") : error_frame(ClientError::NoSuchKey);
        bool exists = value(2).integer > 0;
        if (exists && !replace) return std::string(":0\r\n");
        std::int64_t expires_at = value(1).integer;  // -1: no expiry
        Step restore{dst.shard,
                     {"RESTORE", dst.name, expires_at > 0 ? std::to_string(expires_at) : "0",
                      std::string(dump.text)}};
        if (replace) restore.args.emplace_back("REPLACE");
        if (expires_at > 0) restore.args.emplace_back("ABSTTL");
        steps.push_back(std::move(restore));
        return std::nullopt;
      }
      case 2: {
        ReplyValue restored = value(0);
        // The destination appeared meanwhile (RENAMENX, COPY without REPLACE): as if it had
        // been there.
        if (restored.is_error() && restored.text.starts_with("BUSYKEY"))
          return std::string(":0\r\n");
        if (auto failed = failure(1)) return failed;
        if (copy) return std::string(":1\r\n");
        steps.push_back({src.shard, {"DEL", src.name}});
        return std::nullopt;
      }
      default:
        if (auto failed = failure(1)) return failed;
        return rule_.nx ? std::string(":1\r\n") : std::string("+OK\r\n");
    }
  }

  RequestContext& client_;
  std::uint64_t client_id_;
  const WriteRule& rule_;
  std::string command_;  // upper case, for messages
  std::vector<std::string> args_;
  std::vector<KeyAt> keys_;
  std::vector<std::string> replies_;  // by fragment
  std::uint32_t fragments_;
  std::vector<std::uint32_t> stage_first_;  // each stage's first fragment
  std::uint32_t next_fragment_ = 0;
  std::uint32_t pending_ = 0;
  std::uint64_t slot_ = 0;
  bool done_ = false;
  std::size_t stored_ = 0;  // Store: the members written
  std::string element_;     // ListMove: the element moved
  std::string answer_;
  std::size_t max_read_bytes_;
  placement::TopologyPtr planned_;  // what its keys' shard numbers refer to
  std::uint64_t write_;             // its number in the registry (staged_writes.h)
  std::size_t read_bytes_ = 0;
};

}  // namespace

void route_cross_shard_write(const Routed& routed) {
  auto& client = routed.client;
  const WriteRule& rule = *cross_shard_write_rule(routed.spec);
  std::vector<KeyAt> keys;
  keys.reserve(routed.plan.keys.size());
  for (const auto& key : routed.plan.keys)
    keys.push_back({std::string(routed.request.args[key.position]), key.owner.shard});
  std::vector<std::string> args(routed.request.args.begin(), routed.request.args.end());
  std::uint32_t fragments = StagedWrite::fragments_for(rule, keys.size());
  auto merge = std::make_unique<StagedWrite>(client, rule, upper_name(routed.spec), std::move(args),
                                             std::move(keys), fragments);
  StagedWrite& write = *merge;
  auto slot = client.open_slot(fragments, std::move(merge));
  write.start(slot);
}

}  // namespace santral::router
