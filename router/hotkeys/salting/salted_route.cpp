// Commands on salted counters. Each is one request strategy: fragments to the sub-keys'
// shards, merged when all have answered.
//
//   INCRBY likes:500 3  (salts 4, reply estimate)     GET likes:500
//     -> INCRBY likes:500:s3 3 on one sub-key,          -> GET on each of the 4 sub-keys
//        chosen uniformly at random                     <- their sum (nil only if all nil)
//     <- its new value x 4
//
// A salted key may hold a hash (the salting does not know the type, the command does):
// HINCRBY goes to one sub-key as INCRBY does, HGET adds the field up over every sub-key.
#include "router/hotkeys/salting/salted_route.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/key_extraction.h"
#include "protocol/reply_encoder.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/hotkeys/salting/counter_sum.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/merge/reply_merge.h"
#include "router/routes/transaction.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;
using protocol::ReplyValue;
using protocol::RespWriter;

namespace {

// The replies of every fragment, parsed, in fragment order; `frames` holds their bytes.
struct Replies {
  std::span<const ReplyValue> values;
  std::span<const std::string> frames;
  int protocol;

  // Writes the first error among [first, first + count) and returns true, if there is one.
  bool error_in(std::size_t first, std::size_t count, std::string& out) const {
    for (std::size_t i = first; i < first + count; ++i)
      if (values[i].is_error()) {
        out.append(frames[i]);
        return true;
      }
    return false;
  }
  bool error(std::string& out) const { return error_in(0, values.size(), out); }
};

using Finish = std::function<void(const Replies&, std::string&)>;

class SaltedMerge final : public ReplyMerge {
 public:
  SaltedMerge(std::size_t fragments, int protocol, std::string command, Finish finish)
      : frames_(fragments),
        arrived_(fragments, false),
        protocol_(protocol),
        command_(std::move(command)),
        finish_(std::move(finish)) {}

  void add(std::uint32_t fragment, std::string_view reply) override {
    if (fragment >= frames_.size()) return;
    frames_[fragment].assign(reply);
    arrived_[fragment] = true;
  }

  void finish(std::string& out) override {
    std::vector<ReplyValue> values(frames_.size());
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      if (!arrived_[i] || !protocol::parse_reply(frames_[i], values[i])) {
        RespWriter(out).error(error_message(ClientError::MergeInconsistentPlan, command_));
        return;
      }
    }
    finish_(Replies{values, frames_, protocol_}, out);
  }

 private:
  std::vector<std::string> frames_;
  std::vector<bool> arrived_;
  int protocol_;
  std::string command_;
  Finish finish_;
};

// The fragments of one request on salted counters, sent together.
class SaltedCall {
 public:
  explicit SaltedCall(const Routed& routed) : routed_(routed) {}

  std::uint32_t add(std::size_t shard, std::vector<std::string_view> args) {
    fragments_.push_back({shard, std::move(args)});
    return static_cast<std::uint32_t>(fragments_.size() - 1);
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(fragments_.size()); }

  void run(Finish finish) {
    auto& client = routed_.client;
    auto merge = std::make_unique<SaltedMerge>(fragments_.size(), client.state().protocol,
                                               upper_name(routed_.spec), std::move(finish));
    auto slot = client.open_slot(size(), std::move(merge));
    std::string& bytes = client.scratch();
    for (std::uint32_t f = 0; f < size(); ++f) {
      bytes.clear();
      RespWriter(bytes).command(fragments_[f].args);
      client.backend(fragments_[f].shard).send(bytes, &client, slot, f);
    }
  }

 private:
  struct Fragment {
    std::size_t shard;
    std::vector<std::string_view> args;
  };
  const Routed& routed_;
  std::vector<Fragment> fragments_;
};

// A request naming at least one salted counter: its keys, and the counter of each (nullptr
// for a key that is not salted).
struct SaltedRequest {
  const Routed& routed;
  std::span<const PlannedKey> keys;  // the plan's, each with its counter (nullptr: not salted)

  std::string_view key(std::size_t i) const { return routed.request.args[keys[i].position]; }
  // The first key's counter: single-key commands name only that one.
  const SaltedCounter& counter() const { return *keys[0].salted; }
};

// Writes a counter's sum as GET answers it; false after writing an error instead.
bool write_sum(CounterSum& sum, CounterSum::Status status, std::string_view key,
               std::string_view part, int protocol, std::string& out) {
  RespWriter writer(out, protocol);
  if (status == CounterSum::Status::NotNumber) {
    writer.error(error_message(ClientError::SaltedNotNumber, key, part));
    return false;
  }
  if (status == CounterSum::Status::Overflow) {
    writer.error(error_message(ClientError::SaltedOverflow, key));
    return false;
  }
  if (sum.missing())
    writer.null();
  else
    writer.bulk(sum.text());
  return true;
}

// Adds the replies [first, first + count) of one counter; `names` are its sub-keys in that
// order. The sub-key that was not a number, if any, goes to `bad`.
CounterSum::Status add_parts(const Replies& replies, std::size_t first, std::size_t count,
                             std::span<const std::string> names, CounterSum& sum,
                             std::string& bad) {
  for (std::size_t i = 0; i < count; ++i) {
    auto status = sum.add(replies.values[first + i]);
    if (status == CounterSum::Status::NotNumber) bad = names[i];
    if (status != CounterSum::Status::Ok) return status;
  }
  return CounterSum::Status::Ok;
}

// INCR, INCRBY, DECR, DECRBY, INCRBYFLOAT, and HINCRBY, HINCRBYFLOAT on a salted hash: one
// sub-key chosen at random takes the write. `read` is the command that reads a sub-key's
// value (GET, or HGET with the field), for an exact reply.
void increment_with(const SaltedRequest& r, std::vector<std::string_view> read, bool as_float) {
  const SaltedCounter& counter = r.counter();
  auto& worker = r.routed.client.worker();
  std::uint32_t pick = worker.salts().pick(counter.salts);
  SaltedCall call(r.routed);
  std::vector<std::string_view> args(r.routed.request.args.begin(), r.routed.request.args.end());
  args[r.keys[0].position] = counter.sub_keys[pick];
  call.add(counter.shards[pick], std::move(args));
  // Fragment order: the written sub-key, then (exact) every other one.
  std::vector<std::string> names{counter.sub_keys[pick]};
  bool exact = counter.reply == config::SaltReply::Exact;
  if (exact)
    for (std::uint32_t k = 0; k < counter.salts; ++k) {
      if (k == pick) continue;
      read[1] = counter.sub_keys[k];
      call.add(counter.shards[k], read);
      names.push_back(counter.sub_keys[k]);
    }
  std::uint32_t salts = counter.salts;
  call.run(
      [names = std::move(names), exact, as_float, salts](const Replies& replies, std::string& out) {
        if (replies.error(out)) return;
        CounterSum sum;
        std::string bad;
        auto status = add_parts(replies, 0, replies.values.size(), names, sum, bad);
        if (status == CounterSum::Status::Ok && !exact) status = sum.scale(salts);
        RespWriter writer(out, replies.protocol);
        if (status == CounterSum::Status::NotNumber)
          return writer.error(error_message(ClientError::SaltedNotNumber, names[0], bad));
        if (status == CounterSum::Status::Overflow)
          return writer.error(error_message(ClientError::SaltedOverflow, names[0]));
        if (as_float || !sum.integral())
          writer.bulk(sum.text());
        else
          writer.integer(sum.integer());
      });
}

// INCR, INCRBY, DECR, DECRBY; INCRBYFLOAT, whose sum is a float.
void increment(const SaltedRequest& r) {
  increment_with(r, {"GET", ""}, false);
}
void increment_float(const SaltedRequest& r) {
  increment_with(r, {"GET", ""}, true);
}

// HINCRBY; HINCRBYFLOAT.
void hash_increment(const SaltedRequest& r) {
  increment_with(r, {"HGET", "", r.routed.request.args[2]}, false);
}
void hash_increment_float(const SaltedRequest& r) {
  increment_with(r, {"HGET", "", r.routed.request.args[2]}, true);
}

// 1 when the command applied to any sub-key (its integer reply is 1 on one of them).
void write_any(const Replies& replies, std::string& out) {
  if (replies.error(out)) return;
  std::int64_t any = 0;
  for (const auto& value : replies.values) any = std::max(any, value.integer);
  RespWriter(out, replies.protocol).integer(any);
}

// Sends `read` (its key replaced) to every sub-key of the request's counter.
SaltedCall read_every_sub_key(const SaltedRequest& r, std::vector<std::string_view> read) {
  const SaltedCounter& counter = r.counter();
  SaltedCall call(r.routed);
  for (std::uint32_t k = 0; k < counter.salts; ++k) {
    read[1] = counter.sub_keys[k];
    call.add(counter.shards[k], read);
  }
  return call;
}

// GET, and HGET on a salted hash: the sum of every sub-key's value (of the field).
void sum_of(const SaltedRequest& r, std::vector<std::string_view> read) {
  read_every_sub_key(r, std::move(read))
      .run([names = r.counter().sub_keys](const Replies& replies, std::string& out) {
        if (replies.error(out)) return;
        CounterSum sum;
        std::string bad;
        auto status = add_parts(replies, 0, names.size(), names, sum, bad);
        write_sum(sum, status, names[0], bad, replies.protocol, out);
      });
}

void get(const SaltedRequest& r) {
  sum_of(r, {"GET", ""});
}

void hash_get(const SaltedRequest& r) {
  sum_of(r, {"HGET", "", r.routed.request.args[2]});
}

// STRLEN: the length of the sum as GET writes it; 0 when every sub-key is missing.
void strlen_of_sum(const SaltedRequest& r) {
  read_every_sub_key(r, {"GET", ""})
      .run([names = r.counter().sub_keys](const Replies& replies, std::string& out) {
        if (replies.error(out)) return;
        CounterSum sum;
        std::string bad;
        auto status = add_parts(replies, 0, names.size(), names, sum, bad);
        if (status != CounterSum::Status::Ok) {
          write_sum(sum, status, names[0], bad, replies.protocol, out);
          return;
        }
        RespWriter(out, replies.protocol)
            .integer(sum.missing() ? 0 : static_cast<std::int64_t>(sum.text().size()));
      });
}

// A salted hash's fields, each with the sum of its values over the sub-keys, in the order
// first seen. From HGETALL replies (field, value, ...; a RESP3 map is the same flat list).
struct FieldSums {
  std::vector<std::string> fields;
  std::vector<CounterSum> sums;
  std::unordered_map<std::string, std::size_t> at;

  // Adds one sub-key's reply; on a value that is not a number, or an overflow, names the field
  // in `bad`.
  CounterSum::Status add(const ReplyValue& reply, std::string& bad) {
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      std::size_t index = slot(reply.elements[i].text);
      auto status = sums[index].add(reply.elements[i + 1]);
      if (status != CounterSum::Status::Ok) {
        bad = fields[index];
        return status;
      }
    }
    return CounterSum::Status::Ok;
  }
  // Notes a field (from HKEYS replies).
  std::size_t slot(std::string_view field) {
    auto [found, fresh] = at.try_emplace(std::string(field), fields.size());
    if (fresh) {
      fields.emplace_back(field);
      sums.emplace_back();
    }
    return found->second;
  }
};

// HGETALL on a salted hash: every field of any sub-key, with its values added up.
void hash_get_all(const SaltedRequest& r) {
  read_every_sub_key(r, {"HGETALL", ""})
      .run([names = r.counter().sub_keys](const Replies& replies, std::string& out) {
        if (replies.error(out)) return;
        FieldSums all;
        for (std::size_t k = 0; k < replies.values.size(); ++k) {
          std::string field;
          auto status = all.add(replies.values[k], field);
          if (status == CounterSum::Status::NotNumber)
            return RespWriter(out, replies.protocol)
                .error(error_message(ClientError::SaltedNotNumber, names[0],
                                     fmt::format("{}' field '{}", names[k], field)));
          if (status == CounterSum::Status::Overflow)
            return RespWriter(out, replies.protocol)
                .error(error_message(ClientError::SaltedOverflow, names[0]));
        }
        RespWriter writer(out, replies.protocol);
        writer.map_header(all.fields.size());
        for (std::size_t i = 0; i < all.fields.size(); ++i) {
          writer.bulk(all.fields[i]);
          writer.bulk(all.sums[i].text());
        }
      });
}

// HKEYS, HLEN on a salted hash: the fields of any sub-key, each once (or their number).
void hash_fields(const SaltedRequest& r, bool count) {
  read_every_sub_key(r, {"HKEYS", ""}).run([count](const Replies& replies, std::string& out) {
    if (replies.error(out)) return;
    FieldSums all;
    for (const auto& reply : replies.values)
      for (const auto& field : reply.elements) all.slot(field.text);
    RespWriter writer(out, replies.protocol);
    if (count) return writer.integer(static_cast<std::int64_t>(all.fields.size()));
    writer.array_header(all.fields.size());
    for (const auto& field : all.fields) writer.bulk(field);
  });
}

void hash_keys(const SaltedRequest& r) {
  hash_fields(r, false);
}

void hash_length(const SaltedRequest& r) {
  hash_fields(r, true);
}

// HEXISTS on a salted hash: 1 if any sub-key has the field.
void hash_exists(const SaltedRequest& r) {
  read_every_sub_key(r, {"HEXISTS", "", r.routed.request.args[2]}).run(write_any);
}

// Per key of a multi-key request: the fragments it took, and the sub-keys they went to.
struct KeyFragments {
  std::size_t first;
  std::size_t count;
  std::vector<std::string> names;  // salted only
  bool salted;
};

// Sends `command` once per key, or once per sub-key of a salted counter.
std::vector<KeyFragments> per_key(const SaltedRequest& r, SaltedCall& call,
                                  std::string_view command) {
  std::vector<KeyFragments> keys;
  for (std::size_t i = 0; i < r.keys.size(); ++i) {
    const SaltedCounter* counter = r.keys[i].salted;
    KeyFragments entry{call.size(), 0, {}, counter != nullptr};
    if (counter == nullptr) {
      call.add(r.keys[i].owner.shard, {command, r.key(i)});
      entry.count = 1;
    } else {
      for (std::uint32_t k = 0; k < counter->salts; ++k)
        call.add(counter->shards[k], {command, counter->sub_keys[k]});
      entry.count = counter->salts;
      entry.names = counter->sub_keys;
    }
    keys.push_back(std::move(entry));
  }
  return keys;
}

// MGET: a salted counter's entry is its sum; one GET per key or sub-key (salted MGETs are
// rare enough not to be grouped by shard).
void mget(const SaltedRequest& r) {
  SaltedCall call(r.routed);
  auto keys = per_key(r, call, "GET");
  call.run([keys = std::move(keys)](const Replies& replies, std::string& out) {
    RespWriter writer(out, replies.protocol);
    writer.array_header(keys.size());
    for (const auto& key : keys) {
      const ReplyValue& first = replies.values[key.first];
      if (!key.salted) {
        // As MGET: a key that holds no string answers nil.
        if (first.is_error() || first.type != ReplyValue::Type::BulkString)
          writer.null();
        else
          protocol::encode_reply(first, out);
        continue;
      }
      CounterSum sum;
      std::string bad;
      bool failed =
          std::any_of(replies.values.begin() + static_cast<std::ptrdiff_t>(key.first),
                      replies.values.begin() + static_cast<std::ptrdiff_t>(key.first + key.count),
                      [](const ReplyValue& value) { return value.is_error(); });
      auto status = failed ? CounterSum::Status::NotNumber
                           : add_parts(replies, key.first, key.count, key.names, sum, bad);
      if (status != CounterSum::Status::Ok || sum.missing())
        writer.null();
      else
        writer.bulk(sum.text());
    }
  });
}

// EXISTS, DEL, UNLINK: a salted counter counts once, when any of its sub-keys counted.
void count_keys(const SaltedRequest& r) {
  SaltedCall call(r.routed);
  auto keys = per_key(r, call, r.routed.request.args[0]);
  call.run([keys = std::move(keys)](const Replies& replies, std::string& out) {
    if (replies.error(out)) return;
    std::int64_t total = 0;
    for (const auto& key : keys) {
      std::int64_t hits = 0;
      for (std::size_t i = key.first; i < key.first + key.count; ++i)
        hits += replies.values[i].integer;
      total += key.salted ? (hits > 0 ? 1 : 0) : hits;
    }
    RespWriter(out, replies.protocol).integer(total);
  });
}

// SET: the whole counter becomes the value: in the key itself, the other sub-keys removed.
void set(const SaltedRequest& r) {
  const SaltedCounter& counter = r.counter();
  SaltedCall call(r.routed);
  const auto& args = r.routed.request.args;
  call.add(counter.shards[0], std::vector<std::string_view>(args.begin(), args.end()));
  for (std::uint32_t k = 1; k < counter.salts; ++k)
    call.add(counter.shards[k], {"DEL", counter.sub_keys[k]});
  call.run([](const Replies& replies, std::string& out) {
    if (replies.error(out)) return;
    out.append(replies.frames[0]);
  });
}

// The same command on every sub-key; 1 when it applied to any. Returns the call to run.
SaltedCall on_every_sub_key(const SaltedRequest& r) {
  const SaltedCounter& counter = r.counter();
  SaltedCall call(r.routed);
  for (std::uint32_t k = 0; k < counter.salts; ++k) {
    std::vector<std::string_view> args(r.routed.request.args.begin(), r.routed.request.args.end());
    args[r.keys[0].position] = counter.sub_keys[k];
    call.add(counter.shards[k], std::move(args));
  }
  return call;
}

// PERSIST: every sub-key.
void every_sub_key(const SaltedRequest& r) {
  on_every_sub_key(r).run(write_any);
}

// EXPIRE, PEXPIRE: every sub-key. A sub-key missing at that moment is then created as 0 with the
// same time to live (SET NX PX), so that an increment creating it later cannot outlive the
// counter: INCR keeps the deadline of the key it adds to.
void expire_with(const SaltedRequest& r, bool seconds) {
  const auto& args = r.routed.request.args;
  auto given = protocol::parse_integer<std::int64_t>(args[2]);
  std::int64_t ttl = given.value_or(-1);
  if (!given || (seconds && __builtin_mul_overflow(ttl, std::int64_t{1000}, &ttl))) ttl = -1;
  auto& client = r.routed.client;
  WorkerServices* worker = &client.worker();
  const SaltedCounter& counter = r.counter();
  on_every_sub_key(r).run([worker, ttl, profile = client.profile(), client_id = client.state().id,
                           sub_keys = counter.sub_keys,
                           shards = counter.shards](const Replies& replies, std::string& out) {
    write_any(replies, out);
    auto is = [&replies](auto test) {
      return std::any_of(replies.values.begin(), replies.values.end(), test);
    };
    bool applied = is([](const ReplyValue& value) {
      return value.type == ReplyValue::Type::Integer && value.integer == 1;
    });
    if (!applied || ttl <= 0 || is([](const ReplyValue& value) { return value.is_error(); }))
      return;
    std::string bytes;
    std::string milliseconds = std::to_string(ttl);
    for (std::size_t k = 0; k < sub_keys.size(); ++k) {
      if (replies.values[k].integer != 0) continue;  // it exists: it has the deadline
      bytes.clear();
      std::string_view set[] = {"SET", sub_keys[k], "0", "NX", "PX", milliseconds};
      RespWriter(bytes).command(set);
      worker->pool().shared(shards[k], profile, client_id).send_silent(bytes);
    }
  });
}

void expire(const SaltedRequest& r) {
  expire_with(r, true);
}
void pexpire(const SaltedRequest& r) {
  expire_with(r, false);
}

// TTL, PTTL: the key's own (sub-key 0's).
void base_key(const SaltedRequest& r) {
  forward_whole(r.routed, r.counter().shards[0]);
}

using Handler = void (*)(const SaltedRequest&);

// What a salted command does with the sub-keys, as SANTRAL EXPLAIN says it.
constexpr std::string_view kOneSubKey = "goes to one sub-key chosen at random";
constexpr std::string_view kEverySubKey = "reads every sub-key and adds the values up";
constexpr std::string_view kPerKey = "one command per key, or per sub-key of a salted counter";
constexpr std::string_view kAllSubKeys = "runs on every sub-key";
constexpr std::string_view kBaseKey = "runs on the key itself (sub-key 0)";

struct SaltedCommand {
  protocol::SaltedOperation operation;
  Handler handler;
  std::string_view effect;
  bool counter = true;  // see counter_command()
};

using S = protocol::SaltedOperation;

// What works on a salted counter (the command table's salted= column), indexed by it:
// kSaltedCommands[operation - 1]. A command without one is refused with an error naming the key.
constexpr SaltedCommand kSaltedCommands[] = {
    {S::Increment, increment, kOneSubKey},
    {S::IncrementFloat, increment_float, kOneSubKey},
    {S::Get, get, kEverySubKey},
    {S::Mget, mget, kPerKey},
    {S::CountKeys, count_keys, kPerKey},
    // Replaces the whole value: a key that sees SET is not salted automatically.
    {S::Set, set, "the value goes to the key itself, the other sub-keys are deleted", false},
    {S::Expire, expire, kAllSubKeys},
    {S::Pexpire, pexpire, kAllSubKeys},
    {S::Persist, every_sub_key, kAllSubKeys},
    {S::BaseKey, base_key, kBaseKey},
    {S::Strlen, strlen_of_sum, kEverySubKey},
    // A salted key may hold a hash of counters: the same, field by field. Salted by the config
    // or SANTRAL SALT only, never automatically: a hash may mix counters with text fields
    // (written rarely, so perhaps never sampled), which salted HGET and HGETALL cannot sum.
    {S::HashIncrement, hash_increment, kOneSubKey, false},
    {S::HashIncrementFloat, hash_increment_float, kOneSubKey, false},
    {S::HashGet, hash_get, kEverySubKey, false},
    {S::HashGetAll, hash_get_all, kEverySubKey, false},
    {S::HashKeys, hash_keys, "reads every sub-key, each field once", false},
    {S::HashLength, hash_length, "reads every sub-key, each field once", false},
    {S::HashExists, hash_exists, "reads every sub-key", false},
};

constexpr bool indexed_by_operation() {
  for (std::size_t i = 0; i < std::size(kSaltedCommands); ++i)
    if (static_cast<std::size_t>(kSaltedCommands[i].operation) != i + 1) return false;
  return static_cast<std::size_t>(S::HashExists) == std::size(kSaltedCommands);
}
static_assert(indexed_by_operation(), "one entry per SaltedOperation, in the enum's order");

const SaltedCommand* salted_command(const protocol::CommandSpec& spec) {
  if (spec.salted == S::None) return nullptr;
  return &kSaltedCommands[static_cast<std::size_t>(spec.salted) - 1];
}

}  // namespace

void route_salted(const Routed& routed) {
  salted_command(routed.spec)->handler(SaltedRequest{routed, routed.plan.keys});
}

std::string_view salted_effect(const protocol::CommandSpec& spec) {
  const SaltedCommand* found = salted_command(spec);
  return found != nullptr ? found->effect : std::string_view("not supported");
}

bool counter_command(const protocol::CommandSpec& spec) {
  const SaltedCommand* found = salted_command(spec);
  return found != nullptr && found->counter;
}

}  // namespace santral::router
