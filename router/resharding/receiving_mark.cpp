#include "router/resharding/receiving_mark.h"

#include <atomic>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "protocol/resp_writer.h"
#include "router/resharding/migrate.h"

namespace santral::router {

namespace {

// KEYS: the mark. ARGV: holder, ttl (ms), the database to leave the connection in.
constexpr std::string_view kMark = R"(local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('SELECT', 0)
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.0f', now + ttl))
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
redis.call('SELECT', ARGV[3])
return 1)";

// KEYS: the mark. ARGV: holder, the database to leave the connection in.
constexpr std::string_view kUnmark = R"(redis.call('SELECT', 0)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SELECT', ARGV[2])
return 1)";

// KEYS: the mark, then the keys to move. ARGV: the keys' database, then MIGRATE's words
// before KEYS. Marks that expired are dropped on the way.
constexpr std::string_view kMigrateUnlessReceiving = R"(local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SELECT', 0)
local marks = redis.call('HGETALL', KEYS[1])
local live = 0
for i = 1, #marks, 2 do
  if tonumber(marks[i + 1]) > now then live = live + 1 else redis.call('HDEL', KEYS[1], marks[i]) end
end
redis.call('SELECT', ARGV[1])
if live > 0 then
  return redis.error_reply('TRYAGAIN santral: the source is receiving a MIGRATE of another router; sent again shortly')
end
local args = {}
for i = 2, #ARGV do args[#args + 1] = ARGV[i] end
args[#args + 1] = 'KEYS'
for i = 2, #KEYS do args[#args + 1] = KEYS[i] end
return redis.pcall(unpack(args)))";

constexpr std::string_view kRefusal = "-TRYAGAIN santral: the source is receiving";

std::string eval(std::string_view script, std::span<const std::string_view> keys,
                 std::span<const std::string_view> args) {
  std::string count = std::to_string(keys.size());
  std::vector<std::string_view> words = {"EVAL", script, count};
  words.insert(words.end(), keys.begin(), keys.end());
  words.insert(words.end(), args.begin(), args.end());
  std::string out;
  protocol::RespWriter(out).command(words);
  return out;
}

}  // namespace

std::string receiving_mark_holder() {
  static const std::uint64_t process =
      (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  static std::atomic<std::uint64_t> count{0};
  return fmt::format("{:016x}:{}", process, ++count);
}

std::string mark_receiving(std::string_view holder, std::chrono::milliseconds ttl, int database) {
  std::string ms = std::to_string(ttl.count());
  std::string db = std::to_string(database);
  std::string_view keys[] = {kReceivingMarkKey};
  std::string_view args[] = {holder, ms, db};
  return eval(kMark, keys, args);
}

std::string unmark_receiving(std::string_view holder, int database) {
  std::string db = std::to_string(database);
  std::string_view keys[] = {kReceivingMarkKey};
  std::string_view args[] = {holder, db};
  return eval(kUnmark, keys, args);
}

std::string migrate_unless_receiving(const config::Config& config, const config::Endpoint& target,
                                     int database, std::span<const std::string_view> keys) {
  std::vector<std::string_view> script_keys = {kReceivingMarkKey};
  script_keys.insert(script_keys.end(), keys.begin(), keys.end());
  std::string db = std::to_string(database);
  auto migrate = migrate_arguments(config, target, database);
  std::vector<std::string_view> args = {db};
  args.insert(args.end(), migrate.begin(), migrate.end());
  return eval(kMigrateUnlessReceiving, script_keys, args);
}

bool refused_as_receiving(std::string_view reply) {
  return reply.starts_with(kRefusal);
}

}  // namespace santral::router
