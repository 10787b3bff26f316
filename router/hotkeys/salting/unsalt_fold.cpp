#include "router/hotkeys/salting/unsalt_fold.h"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"
#include "router/process/worker.h"
#include "router/resharding/migrate.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

// HGETALL and DEL of a hash sub-key in one step, so that no field is added between the two.
constexpr std::string_view kTakeHash =
    "local all = redis.call('HGETALL', KEYS[1]) redis.call('DEL', KEYS[1]) return all";

class UnsaltFold final : public ReplySink {
 public:
  UnsaltFold(Worker& worker, const char* log_prefix, SaltedCounter counter, UnsaltFoldTarget target)
      : worker_(worker),
        log_prefix_(log_prefix),
        counter_(std::move(counter)),
        target_(std::move(target)) {}

  void next() {
    if (sub_key_ >= counter_.salts) return finish("+OK\r\n");
    step_ = Step::Take;
    send(counter_.sub_keys[sub_key_], {"GETDEL", counter_.sub_keys[sub_key_]});
  }

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view reply) override {
    if (pulling_) return pulled(reply);
    protocol::ReplyValue value;
    bool parsed = protocol::parse_reply(reply, value);
    if (parsed && step_ == Step::Take && value.is_error() && value.text.starts_with("WRONGTYPE")) {
      step_ = Step::TakeHash;
      return send(counter_.sub_keys[sub_key_],
                  {"EVAL", kTakeHash, "1", counter_.sub_keys[sub_key_]});
    }
    if (parsed && step_ == Step::Add && value.is_error() && !as_float_) {
      as_float_ = true;  // the key holds a fraction: INCRBY refuses it, INCRBYFLOAT does not
      return add();
    }
    if (!parsed || value.is_error())
      return fail(value.is_error() ? std::string(value.text) : "an unreadable reply");
    switch (step_) {
      case Step::Take:
        if (value.type == protocol::ReplyValue::Type::Null) return next_sub_key();
        taken_ = {{"", std::string(value.text)}};
        hash_ = false;
        return add();
      case Step::TakeHash:
        taken_.clear();
        hash_ = true;
        for (std::size_t i = 0; i + 1 < value.elements.size(); i += 2)
          taken_.emplace_back(value.elements[i].text, value.elements[i + 1].text);
        if (taken_.empty()) return next_sub_key();
        return add();
      case Step::Add:
        if (++added_ < taken_.size()) return add(true);
        return next_sub_key();
    }
  }

 private:
  enum class Step { Take, TakeHash, Add };

  void next_sub_key() {
    ++sub_key_;
    next();
  }

  // Adds the taken value (a string counter's one, or a hash's next field) onto the key, with
  // INCRBY while both are integers, else (or after INCRBY refused) INCRBYFLOAT.
  void add(bool next_value = false) {
    if (step_ != Step::Add) {
      step_ = Step::Add;
      added_ = 0;
      ++folded_;
      next_value = true;
    }
    const auto& [field, amount] = taken_[added_];
    if (next_value) as_float_ = !protocol::parse_integer<std::int64_t>(amount);
    const std::string& key = counter_.sub_keys[0];
    if (hash_)
      send(key, {as_float_ ? "HINCRBYFLOAT" : "HINCRBY", key, field, amount});
    else
      send(key, {as_float_ ? "INCRBYFLOAT" : "INCRBY", key, amount});
  }

  void fail(const std::string& why) {
    // Santral's own error (connection lost, timeout, shard down) rather than the shard's: the
    // request may have run before the failure, and nobody can tell.
    bool unknown = why.starts_with("ERR santral:");
    std::string advice;
    if (step_ == Step::Add) {
      std::string left;
      for (std::size_t i = added_; i < taken_.size(); ++i)
        left +=
            (left.empty() ? "" : ", ") +
            (hash_ ? fmt::format("{} {}", taken_[i].first, taken_[i].second) : taken_[i].second);
      advice = fmt::format(
          "its part of the count, {}, was taken from it and must be added to the key by hand{}",
          left, unknown ? " (unless the failed request was carried out: check the key first)" : "");
    } else {
      advice = unknown ? "if the shard took that sub-key's part before the failure, the part is "
                         "lost; otherwise the sub-key still holds it"
                       : "that sub-key still holds its part of the count";
    }
    std::string rest;
    for (std::uint32_t k = sub_key_ + (step_ == Step::Add ? 1 : 0); k < counter_.salts; ++k)
      rest += (rest.empty() ? "'" : ", '") + counter_.sub_keys[k] + "'";
    if (!rest.empty() || step_ != Step::Add)
      advice += fmt::format(
          "; to fold what is left{}, salt it again with the same count and unsalt it (SANTRAL "
          "SALT {} {}, then SANTRAL UNSALT {}) before the shard map changes",
          rest.empty() ? "" : " (also " + rest + ")", counter_.sub_keys[0], counter_.salts,
          counter_.sub_keys[0]);
    std::string reply;
    protocol::RespWriter(reply).error(error_message(ClientError::UnsaltFold, counter_.sub_keys[0],
                                                    counter_.sub_keys[sub_key_], why, advice));
    finish(reply);
  }

  // Each step goes where `key` lives under the topology in force when it is sent. During a
  // move the key may still be on its old owner: it is pulled over first (as a request's keys
  // are, router/resharding/key_pull.h), and while a move changes direction the step waits
  // until every worker has switched. So a fold never reads or writes a stale copy.
  void send(const std::string& key, std::vector<std::string_view> args) {
    step_bytes_.clear();
    protocol::RespWriter(step_bytes_).command(args);
    step_key_ = key;
    worker_.after_moves_released(
        [self = boost::intrusive_ptr<UnsaltFold>(this)] { self->route(); });
  }

  void route() {
    const auto& topology = worker_.topology();
    std::size_t owner = topology.map->shard_for_key(step_key_);
    auto source = topology.move ? topology.move->source_of(step_key_, owner) : std::nullopt;
    if (!source) return connection(owner).send(step_bytes_, ReplySinkPtr(this), 0, 0);
    pulling_ = true;
    pull_version_ = topology.version;
    claim_ = {{topology.map->shard(*source).address.text()},
              {topology.map->shard(owner).address.text()}};
    worker_.shared().migrations.enter(worker_.io(), claim_,
                                      [self = boost::intrusive_ptr<UnsaltFold>(this),
                                       source = *source, owner] { self->pull(source, owner); });
  }

  // Runs once the migration gate lets the MIGRATE go (router/resharding/migration_gate.h).
  void pull(std::size_t source, std::size_t owner) {
    const auto& topology = worker_.topology();
    if (topology.version != pull_version_) {  // switched meanwhile: routed again
      worker_.shared().migrations.leave(claim_);
      pulling_ = false;
      return worker_.after_moves_released(
          [self = boost::intrusive_ptr<UnsaltFold>(this)] { self->route(); });
    }
    std::string_view keys[] = {step_key_};
    connection(source).send(migrate_command(*topology.config, topology.map->shard(owner).address,
                                            target_.profile.database, keys),
                            ReplySinkPtr(this), 0, 0);
  }

  void pulled(std::string_view reply) {
    worker_.shared().migrations.leave(claim_);
    pulling_ = false;
    if (!migrated(reply))
      return fail("moving it to its new shard first failed: " + reply_text(reply));
    // The topology changed meanwhile: the step is routed (and pulled) again under the new one.
    if (worker_.topology().version != pull_version_)
      return worker_.after_moves_released(
          [self = boost::intrusive_ptr<UnsaltFold>(this)] { self->route(); });
    const auto& topology = worker_.topology();
    connection(topology.map->shard_for_key(step_key_)).send(step_bytes_, ReplySinkPtr(this), 0, 0);
  }

  BackendConnection& connection(std::size_t shard) {
    return worker_.pool().shared(shard, target_.profile, target_.client_id);
  }

  void finish(const std::string& reply) {
    if (reply[0] == '+')
      spdlog::info("{}: '{}' folded {} non-empty sub-keys back into it", log_prefix_,
                   counter_.sub_keys[0], folded_);
    else
      spdlog::warn("{}: {}", log_prefix_, std::string_view(reply).substr(1, reply.size() - 3));
    if (target_.done) target_.done(reply);
  }

  Worker& worker_;
  const char* log_prefix_;
  SaltedCounter counter_;
  UnsaltFoldTarget target_;
  std::uint32_t sub_key_ = 1;  // sub-key 0 is the key itself
  std::uint32_t folded_ = 0;
  Step step_ = Step::Take;
  // What was taken from the sub-key: one value (field empty), or a hash's fields and values.
  std::vector<std::pair<std::string, std::string>> taken_;
  bool hash_ = false;
  std::size_t added_ = 0;
  bool as_float_ = false;
  std::string step_bytes_;  // the step being sent, and the key it goes by
  std::string step_key_;
  bool pulling_ = false;  // the MIGRATE ahead of the step is out
  std::uint64_t pull_version_ = 0;
  MigrationGate::Claim claim_;
};

}  // namespace

void fold_sub_keys(Worker& worker, const char* log_prefix, SaltedCounter counter,
                   UnsaltFoldTarget target) {
  boost::intrusive_ptr<UnsaltFold> fold(
      new UnsaltFold(worker, log_prefix, std::move(counter), std::move(target)));
  fold->next();
}

}  // namespace santral::router
