#include "router/resharding/key_conflict.h"

#include <atomic>
#include <memory>

#include <spdlog/spdlog.h>

#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "router/resharding/shard_calls.h"

namespace santral::router {

namespace {

std::atomic<std::uint64_t> conflicts{0};

// KEYS: the key, its conflict name. ARGV: the target's DUMP of it, "1" when the target has a
// copy (else "0"). Returns 0 (no copy here), 1 (the same: deleted), 2 (none on the target: left
// to the MIGRATE) or the name the copy is kept under.
constexpr std::string_view kSettle = R"(local mine = redis.call('DUMP', KEYS[1])
if not mine then return 0 end
if ARGV[2] == '0' then return 2 end
if mine == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
local name = KEYS[2]
local n = 1
while redis.call('EXISTS', name) == 1 do
  n = n + 1
  name = KEYS[2] .. ':' .. n
end
redis.call('RENAME', KEYS[1], name)
return name)";

}  // namespace

bool busy_key(std::string_view reply) {
  return reply.starts_with("-BUSYKEY") ||
         (reply.starts_with("-ERR Target instance replied with error: BUSYKEY"));
}

void settle_busy_keys(BackendConnection& source, BackendConnection& target,
                      std::vector<std::string> keys, std::function<void(std::string error)> done) {
  std::vector<std::string> dumps;
  dumps.reserve(keys.size());
  for (const auto& key : keys) dumps.push_back(command_bytes({"DUMP", key}));
  BackendConnectionPtr from(&source);
  auto names = std::make_shared<std::pair<std::string, std::string>>(source.target().shard_name,
                                                                     target.target().shard_name);
  call_shard(
      target, dumps,
      [from, keys = std::move(keys), names,
       done = std::move(done)](std::vector<std::string> copies) mutable {
        std::vector<std::string> settles;
        for (std::size_t i = 0; i < keys.size(); ++i) {
          protocol::ReplyValue copy;
          if (!protocol::parse_reply(copies[i], copy) || copy.is_error())
            return done("DUMP on shard '" + names->second + "': " + protocol::line_text(copies[i]));
          bool present = copy.type != protocol::ReplyValue::Type::Null;
          std::string conflict = std::string(kConflictPrefix) + keys[i];
          settles.push_back(command_bytes(
              {"EVAL", kSettle, "2", keys[i], conflict,
               present ? std::string_view(copy.text) : std::string_view(), present ? "1" : "0"}));
        }
        call_shard(
            *from, settles,
            [keys, names, done = std::move(done)](std::vector<std::string> answers) {
              for (std::size_t i = 0; i < keys.size(); ++i) {
                const auto& answer = answers[i];
                if (protocol::is_error_frame(answer))
                  return done("comparing on shard '" + names->first +
                              "': " + protocol::line_text(answer));
                if (answer.starts_with("$")) {
                  protocol::ReplyValue name;
                  protocol::parse_reply(answer, name);
                  conflicts.fetch_add(1, std::memory_order_relaxed);
                  spdlog::warn(
                      "resharding: conflict on key '{}': shard '{}' (its new owner) already holds "
                      "another "
                      "value; that one stays in force, and the copy of shard '{}' is kept there as "
                      "'{}': "
                      "compare them and keep the right one (a request that ran late on a stalled "
                      "shard "
                      "wrote one of them)",
                      keys[i], names->second, names->first, name.text);
                } else if (answer.starts_with(":1")) {
                  spdlog::info(
                      "resharding: key '{}' was on shard '{}' and '{}' with the same value; the "
                      "copy of '{}' was deleted",
                      keys[i], names->first, names->second, names->first);
                }
              }
              done({});
            });
      });
}

std::uint64_t move_conflicts() {
  return conflicts.load(std::memory_order_relaxed);
}

}  // namespace santral::router
