#include "router/hotkeys/salting/unsalt_fold.h"
#include "protocol/reply_scanner.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/draining_connections.h"
#include "router/backend/reply_sink.h"
#include "router/resharding/marked_migrate.h"
#include "router/resharding/migrate.h"
#include "router/resharding/migration_gate.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

// How long one step is sent again while its shard cannot carry it out, and the pauses between.
constexpr std::chrono::milliseconds kFoldStepDeadline{15000};
constexpr std::chrono::milliseconds kFirstPause{50};
constexpr std::chrono::milliseconds kLongestPause{1000};
// How long the mark of an add stays: longer than a stalled shard may keep an add sent before it
// stalled, and runs it once it wakes.
constexpr int kMarkSeconds = 600;

// KEYS: the key, the add's mark; ARGV: the mark's life in ms, "hash" or "string", then field and
// value pairs (a string counter's one field is empty). The mark is set after the increments, so
// that an add the shard refused (a key holding text) leaves no mark, and looked for before them,
// so that an add sent again after its answer was lost adds nothing.
constexpr std::string_view kAdd =
    "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end "
    "for i = 3, #ARGV, 2 do "
    "  local done "
    "  if ARGV[2] == 'hash' then done = redis.pcall('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) "
    "  else done = redis.pcall('INCRBY', KEYS[1], ARGV[i + 1]) end "
    "  if type(done) == 'table' and done.err then "
    "    if ARGV[2] == 'hash' then redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) "
    "    else redis.call('INCRBYFLOAT', KEYS[1], ARGV[i + 1]) end "
    "  end "
    "end "
    "redis.call('SET', KEYS[2], '1', 'PX', ARGV[1]) "
    "return 1";

// Errors after which the step certainly or possibly did not run, and may be sent again: Santral's
// own (timeout, connection lost, shard down, fenced), a held pull's TRYAGAIN, a shard loading
// or busy.
bool worth_again(std::string_view error) {
  for (std::string_view start : {"ERR santral:", "TRYAGAIN", "LOADING", "BUSY", "IOERR"})
    if (error.starts_with(start)) return true;
  return false;
}

// A name for an add's mark that the map in force places with `key` (so that one EVAL reaches
// both), found as a salted counter's sub-keys are; the last one tried when none is (a namespace
// of its own for the key's prefix). A key's hash tag is kept, so it is found at once.
std::string fold_mark(const placement::ShardMap& map, const std::string& key) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  std::size_t owner = map.shard_for_key(key);
  std::string name;
  for (int tries = 0; tries < 256; ++tries) {
    name = fmt::format("santral:fold:{:016x}:{}", random(), key);
    if (map.shard_for_key(name) == owner) break;
  }
  return name;
}

class UnsaltFold final : public ReplySink {
 public:
  UnsaltFold(WorkerServices& worker, const char* log_prefix, SaltedCounter counter,
             UnsaltFoldTarget target)
      : worker_(worker),
        log_prefix_(log_prefix),
        counter_(std::move(counter)),
        target_(std::move(target)),
        pause_(worker.io()) {}

  void next() {
    if (sub_key_ >= counter_.salts) return finish("+OK\r\n");
    begin(Step::Read);
    send(sub_key(), {"GET", sub_key()});
  }

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view reply) override {
    if (pulling_) return pulled(reply);
    if (step_ == Step::DropMark) return next_sub_key();  // left to expire if not dropped
    protocol::ReplyValue value;
    if (!protocol::parse_reply(reply, value)) return fail("an unreadable reply");
    if (value.is_error()) {
      if (step_ == Step::Read && value.text.starts_with("WRONGTYPE")) {
        step_ = Step::ReadHash;
        return send(sub_key(), {"HGETALL", sub_key()});
      }
      if (step_ == Step::Add && value.text.starts_with("ERR santral:")) {
        add_unknown_ = true;  // it may have run, or may yet run, where it went
        keep_mark_ = true;
        add_unknown_version_ = sent_version_;
      }
      if (!worth_again(value.text)) return fail(std::string(value.text));
      // Given up on by Santral: it may yet run where it went. Sent again (or looked for) only
      // once that shard proves it done or dead (draining_connections.h), so that a copy
      // running late cannot meet the one sent again.
      if (value.text.starts_with("ERR santral:")) {
        auto& draining = DrainingConnections::of(*sent_io_);
        if (draining.draining(sent_address_))
          spdlog::warn(
              "{}: '{}': the {} of sub-key '{}' was given up on ({}); it is sent again once its "
              "shard ({}) has proven it done or dead (a stalled shard runs it when it wakes)",
              log_prefix_, key(), step_name(), sub_key(), value.text, sent_address_);
        return draining.after(sent_address_, [self = boost::intrusive_ptr<UnsaltFold>(this),
                                              why = std::string(value.text)] { self->again(why); });
      }
      return again(std::string(value.text));
    }
    switch (step_) {
      case Step::Read:
        if (value.type == protocol::ReplyValue::Type::Null) return next_sub_key();
        taken_ = {{"", std::string(value.text)}};
        hash_ = false;
        return add();
      case Step::ReadHash:
        taken_.clear();
        hash_ = true;
        for (std::size_t i = 0; i + 1 < value.elements.size(); i += 2)
          taken_.emplace_back(value.elements[i].text, value.elements[i + 1].text);
        if (taken_.empty()) return next_sub_key();
        return add();
      case Step::LookForMark:
        if (value.integer == 1) return added();  // the earlier add ran
        return add();  // it did not: a new mark, placed with the key where it is now
      case Step::Add:
        return added();
      case Step::Delete:
        return drop_mark();
      case Step::DropMark:
        return next_sub_key();
    }
  }

 private:
  enum class Step { Read, ReadHash, Add, LookForMark, Delete, DropMark };

  const char* step_name() const {
    switch (step_) {
      case Step::Read:
      case Step::ReadHash:
        return "read";
      case Step::Add:
        return "add";
      case Step::LookForMark:
        return "look for an earlier add's mark";
      case Step::Delete:
        return "delete";
      case Step::DropMark:
        return "mark's removal";
    }
    return "step";
  }

  const std::string& sub_key() const { return counter_.sub_keys[sub_key_]; }
  const std::string& key() const { return counter_.sub_keys[0]; }

  void begin(Step step) {
    step_ = step;
    deadline_ = std::chrono::steady_clock::now() + kFoldStepDeadline;
    pause_length_ = kFirstPause;
  }

  void next_sub_key() {
    ++sub_key_;
    keep_mark_ = false;
    next();
  }

  // The mark stays (until it expires) only where an add's answer was lost: a copy of that add
  // may still run. Otherwise every add sent was answered, and nothing needs it any more.
  void drop_mark() {
    if (keep_mark_) return next_sub_key();
    step_ = Step::DropMark;
    send(mark_, {"DEL", mark_});
  }

  // The value read (a string counter's one, or a hash's fields), added onto the key by one
  // EVAL that runs once however often it is sent (its mark).
  void add() {
    if (step_ != Step::LookForMark) begin(Step::Add);
    step_ = Step::Add;
    add_unknown_ = false;
    send(key(), add_words());
  }

  // The add's EVAL with a new mark named for where the key is under the topology in force now
  // (route() names it again if that changes before it goes).
  std::vector<std::string_view> add_words() {
    mark_ = fold_mark(*worker_.topology().map, key());
    named_version_ = worker_.topology().version;
    mark_millis_ = std::to_string(kMarkSeconds * 1000);
    std::vector<std::string_view> args = {
        "EVAL", kAdd, "2", key(), mark_, mark_millis_, hash_ ? "hash" : "string"};
    for (const auto& [field, amount] : taken_) {
      args.push_back(field);
      args.push_back(amount);
    }
    return args;
  }

  void added() {
    ++folded_;
    begin(Step::Delete);
    send(sub_key(), {"DEL", sub_key()});
  }

  // After an error the step may not have run: sent again after a pause, until the deadline.
  void again(const std::string& why) {
    if (step_ == Step::DropMark) return next_sub_key();  // left to expire
    if (std::chrono::steady_clock::now() + pause_length_ > deadline_) return fail(why);
    spdlog::warn("{}: '{}': the {} of sub-key '{}' may not have run ({}); sent again in {} ms",
                 log_prefix_, key(), step_name(), sub_key(), why, pause_length_.count());
    pause_.expires_after(pause_length_);
    pause_length_ = std::min(pause_length_ * 2, kLongestPause);
    pause_.async_wait([self = boost::intrusive_ptr<UnsaltFold>(this)](boost::system::error_code) {
      self->worker_.after_moves_released([self] { self->route(); });
    });
  }

  std::string taken_text() const {
    std::string text;
    for (std::size_t i = 0; i < taken_.size(); ++i)
      text += (text.empty() ? "" : ", ") +
              (hash_ ? fmt::format("{} {}", taken_[i].first, taken_[i].second) : taken_[i].second);
    return text;
  }

  void fail(const std::string& why) {
    std::string advice;
    switch (step_) {
      case Step::Read:
      case Step::ReadHash:
        advice = "that sub-key still holds its part of the count";
        break;
      case Step::Add:
      case Step::LookForMark:
        advice = add_unknown_
                     ? fmt::format(
                           "whether its part of the count, {}, was added to the key is unknown: "
                           "it was if the key '{}' exists (for {} s after the add); if it was, "
                           "delete the sub-key (DEL {}) first, as it still holds the part",
                           taken_text(), mark_, kMarkSeconds, sub_key())
                     : fmt::format(
                           "its part of the count, {}, was not added to the key; the "
                           "sub-key still holds it",
                           taken_text());
        break;
      case Step::Delete:
      case Step::DropMark:
        advice = fmt::format(
            "its part of the count, {}, was added to the key, but the sub-key still holds it: "
            "delete it (DEL {}) before the key is salted again, or it is counted twice",
            taken_text(), sub_key());
        break;
    }
    std::string rest;
    bool this_one = step_ != Step::Delete && step_ != Step::DropMark;
    for (std::uint32_t k = sub_key_ + (this_one ? 0 : 1); k < counter_.salts; ++k)
      rest += (rest.empty() ? "'" : ", '") + counter_.sub_keys[k] + "'";
    if (!rest.empty())
      advice += fmt::format(
          "; to fold {}, salt it again with the same count and unsalt it (SANTRAL SALT {} {}, "
          "then SANTRAL UNSALT {}) before the shard map changes",
          rest, key(), counter_.salts, key());
    std::string reply;
    protocol::RespWriter(reply).error(
        error_message(ClientError::UnsaltFold, key(), sub_key(), why, advice));
    finish(reply);
  }

  // Each step goes where `key` lives under the topology in force when it is sent. During a
  // move the key may still be on its old owner: it is pulled over first (as a request's keys
  // are, router/routes/key_pull.h), and while a move changes direction the step waits
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
    // An add that never ran (none sent yet, or answered that it did not): its mark is named for
    // the topology it goes by, so that a later look for it finds it where its name places it.
    if (step_ == Step::Add && !add_unknown_ && topology.version != named_version_) {
      step_bytes_.clear();
      protocol::RespWriter(step_bytes_).command(add_words());
    }
    // An add whose answer was lost, sent again under another topology: the key may have moved
    // away from its mark, so the mark is looked for first, wherever it is now.
    if (step_ == Step::Add && add_unknown_ && topology.version != add_unknown_version_) {
      step_ = Step::LookForMark;
      step_bytes_.clear();
      std::string_view exists[] = {"EXISTS", mark_};
      protocol::RespWriter(step_bytes_).command(exists);
      step_key_ = mark_;
    }
    std::size_t owner = topology.map->shard_for_key(step_key_);
    auto source = topology.move ? topology.move->source_of(step_key_, owner) : std::nullopt;
    if (!source) return send_to(owner, step_bytes_);
    pulling_ = true;
    pull_version_ = topology.version;
    claim_ = {{topology.map->shard(*source).address.text()},
              {topology.map->shard(owner).address.text()}};
    worker_.migrations().enter(worker_.io(), claim_,
                               [self = boost::intrusive_ptr<UnsaltFold>(this), source = *source,
                                owner] { self->pull(source, owner); });
  }

  // Runs once the migration gate lets the MIGRATE go (router/resharding/migration_gate.h).
  void pull(std::size_t source, std::size_t owner) {
    const auto& topology = worker_.topology();
    if (topology.version != pull_version_) {  // switched meanwhile: routed again
      worker_.migrations().leave(claim_);
      pulling_ = false;
      return worker_.after_moves_released(
          [self = boost::intrusive_ptr<UnsaltFold>(this)] { self->route(); });
    }
    std::string_view keys[] = {step_key_};
    auto still_wanted = [self = boost::intrusive_ptr<UnsaltFold>(this), version = pull_version_] {
      return self->worker_.topology().version == version;
    };
    auto migrate =
        plan_migrate(*topology.config, topology.map->shard(owner).address, target_.profile.database,
                     keys, connection(source), connection(owner), still_wanted);
    // The claim is held until the MIGRATE is over, which a timeout is not (marked_migrate.h).
    migrate.settled = [gate = &worker_.migrations(), claim = claim_] { gate->leave(claim); };
    send_migrate(worker_.io(), std::move(migrate), ReplySinkPtr(this), 0, 0);
  }

  void pulled(std::string_view reply) {
    pulling_ = false;
    // The step did not run: sent again (pulled again) after a pause.
    if (!migrated(reply))
      return again("moving it to its new shard first failed: " + protocol::line_text(reply));
    // The topology changed meanwhile: the step is routed (and pulled) again under the new one.
    if (worker_.topology().version != pull_version_)
      return worker_.after_moves_released(
          [self = boost::intrusive_ptr<UnsaltFold>(this)] { self->route(); });
    send_to(worker_.topology().map->shard_for_key(step_key_), step_bytes_);
  }

  void send_to(std::size_t shard, const std::string& bytes) {
    sent_version_ = worker_.topology().version;
    sent_address_ = connection(shard).target().address.text();
    sent_io_ = &connection(shard).io();
    // A fold's steps wait as long as its MIGRATEs do (migrate.h): one policy for a move's work.
    connection(shard).send_within(bytes, ReplySinkPtr(this), 0, 0,
                                  migrate_answer_timeout(*worker_.topology().config));
  }

  BackendConnection& connection(std::size_t shard) {
    return worker_.pool().shared(shard, target_.profile, target_.client_id);
  }

  void finish(const std::string& reply) {
    if (reply[0] == '+')
      spdlog::info("{}: '{}' folded {} non-empty sub-keys back into it", log_prefix_, key(),
                   folded_);
    else
      spdlog::warn("{}: {}", log_prefix_, std::string_view(reply).substr(1, reply.size() - 3));
    if (target_.done) target_.done(reply);
  }

  WorkerServices& worker_;
  const char* log_prefix_;
  SaltedCounter counter_;
  UnsaltFoldTarget target_;
  std::uint32_t sub_key_ = 1;  // sub-key 0 is the key itself
  std::uint32_t folded_ = 0;
  Step step_ = Step::Read;
  // What was read from the sub-key: one value (field empty), or a hash's fields and values.
  std::vector<std::pair<std::string, std::string>> taken_;
  bool hash_ = false;
  std::string mark_;                 // the add's mark, a key placed with the key
  std::string mark_millis_;          // its life, as the add's EVAL says it
  std::uint64_t named_version_ = 0;  // the topology mark_ was named for
  bool add_unknown_ = false;         // an add's answer was lost: it may have run, or may yet run
  bool keep_mark_ = false;           // an answer was lost for an add of this sub-key
  std::uint64_t add_unknown_version_ = 0;  // the topology it was sent under
  std::uint64_t sent_version_ = 0;         // the topology the last request was sent under
  std::string sent_address_;               // ... and the server it went to
  boost::asio::io_context* sent_io_ = &worker_.io();  // ... on its connection's loop
  std::chrono::steady_clock::time_point deadline_;    // of the step under way
  std::chrono::milliseconds pause_length_ = kFirstPause;
  boost::asio::steady_timer pause_;
  std::string step_bytes_;  // the step being sent, and the key it goes by
  std::string step_key_;
  bool pulling_ = false;  // the MIGRATE ahead of the step is out
  std::uint64_t pull_version_ = 0;
  MigrationGate::Claim claim_;
};

}  // namespace

void fold_sub_keys(WorkerServices& worker, const char* log_prefix, SaltedCounter counter,
                   UnsaltFoldTarget target) {
  boost::intrusive_ptr<UnsaltFold> fold(
      new UnsaltFold(worker, log_prefix, std::move(counter), std::move(target)));
  fold->next();
}

}  // namespace santral::router
