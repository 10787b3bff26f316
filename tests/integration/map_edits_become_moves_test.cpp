// Every edit of the config that gives keys another shard is a move, whatever it edits: the hash
// function, the hash tag, a namespace's pattern, the namespaces' order. The reload plans a move
// and says how many keys it moves, the old map keeps serving every key until the move is
// approved, and once it has ended every key is on its owner under the new map, once, with its
// value. An edit that places no key elsewhere is applied at once.
#include <catch2/catch.hpp>

#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

constexpr int kKeys = 10000;
// Slow enough that the reads below meet keys not moved yet, fast enough for a short test.
const std::string kSettings =
    "watch_file: false\n"
    "resharding: {max_keys_per_sec: 4000, batch_keys: 100}\n";

using KeyName = std::function<std::string(int)>;

santral::placement::ShardMap map_of(const SantralProcess& santral) {
  return santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
}

std::string value_of(int i) {
  return "v" + std::to_string(i);
}

// GETs every key through Santral (pipelined); how many do not answer their value.
int unreadable(RedisClient& client, const KeyName& key) {
  for (int i = 0; i < kKeys; ++i) client.append({"GET", key(i)});
  int missing = 0;
  for (int i = 0; i < kKeys; ++i)
    if (client.get_reply().str != value_of(i)) ++missing;
  return missing;
}

// The number before "% of" in a reload's reply ("... 66.41% of the keys ..."); -1 when none.
double share_in(const std::string& reply) {
  auto at = reply.find("% of");
  if (at == std::string::npos) return -1;
  auto start = at;
  while (start > 0 &&
         (std::isdigit(static_cast<unsigned char>(reply[start - 1])) || reply[start - 1] == '.'))
    --start;
  if (start == at) return -1;
  return std::stod(reply.substr(start, at - start));
}

// The share of the keys a reload's reply says change shard, in percent: at least `low`, at
// most `high`.
struct Share {
  double low, high;
};

// Loads kKeys keys named by `key` under `before`, edits the file to `after` and reloads: the
// reload plans a move (and, with `share`, says how many keys it moves), the old map keeps
// serving every key, and once the approved move has ended every key is on its owner under
// `after`, once, with its value.
void check_edit_is_a_move(const std::string& before, const std::string& after, const KeyName& key,
                          std::optional<Share> share = std::nullopt) {
  RedisServer a, b, c;
  std::vector<RedisServer*> shards = {&a, &b, &c};
  SantralProcess santral(shards_yaml(shards) + before + kSettings);
  auto client = santral.client();
  for (int i = 0; i < kKeys; ++i) client.append({"SET", key(i), value_of(i)});
  for (int i = 0; i < kKeys; ++i) REQUIRE(client.get_reply().is_ok());
  auto old_map = map_of(santral);

  rewrite(santral, shards_yaml(shards) + after + kSettings);
  auto new_map = map_of(santral);
  int changing = 0;
  for (int i = 0; i < kKeys; ++i)
    if (old_map.shard_for_key(key(i)) != new_map.shard_for_key(key(i))) ++changing;
  INFO(changing << " of " << kKeys << " keys have another owner under the edited map");
  REQUIRE(changing > kKeys / 10);  // the edit does move keys: the case tests something

  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO("SANTRAL RELOAD: " << reload.str);
  CHECK(reload.type == Reply::Type::Status);
  bool planned = reload.str.find("planned") != std::string::npos;
  CHECK(planned);
  if (share) {
    double said = share_in(reload.str);
    CHECK(said >= share->low);
    CHECK(said <= share->high);
  }
  auto state = reshard_status(client)["state"];
  CHECK(state == "planned");
  // Planned, nothing moves: the old map still serves every key.
  int missing = unreadable(client, key);
  INFO(missing << " of " << kKeys << " keys unreadable after the reload");
  CHECK(missing == 0);
  REQUIRE(state == "planned");

  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  // While keys move, every key answers its value.
  CHECK(unreadable(client, key) == 0);
  REQUIRE(wait_for_state(client, "idle"));

  auto placed = where(shards);
  CHECK(placed.size() == static_cast<std::size_t>(kKeys));
  for (const auto& [name, on] : placed) {
    INFO(name);
    REQUIRE(on.size() == 1);
    REQUIRE(new_map.shard(new_map.shard_for_key(name)).address.port == shards[on[0]]->port());
  }
  CHECK(unreadable(client, key) == 0);
}

}  // namespace

TEST_CASE("another hash function is a planned move that reports the keys it moves") {
  // Three shards, a new hash: about 2/3 of the keys get another owner.
  check_edit_is_a_move(
      "hash: murmur\n", "hash: crc32a\n", [](int i) { return "key:" + std::to_string(i); },
      Share{50, 80});
}

TEST_CASE("a hash tag added is a planned move") {
  // The default tag is {}: a[7]c1 is hashed whole; with [] it is placed by 7.
  check_edit_is_a_move("", "hash_tag: \"[]\"\n", [](int i) {
    return "a[" + std::to_string(i % 1000) + "]c" + std::to_string(i);
  });
}

TEST_CASE("a namespace pattern edited so that its keys fall to another rule is a planned move") {
  // user:N keys are the namespace's, all on s0; with the pattern edited they fall to the
  // default placement, over every shard.
  auto users = [](const std::string& match) {
    return "namespaces:\n"
           "  - name: users\n"
           "    match: \"" +
           match +
           "\"\n"
           "    strategy: hashed\n"
           "    shards: [s0]\n";
  };
  check_edit_is_a_move(users("user:{id}"), users("member:{id}"),
                       [](int i) { return "user:" + std::to_string(i); });
}

TEST_CASE("two namespaces swapped in order is a planned move") {
  // N:x:y matches both; the first in the list places it (left: s0 or s1; right: s1 or s2).
  const std::string left =
      "  - name: left\n"
      "    match: \"{a}:x:{b}\"\n"
      "    strategy: hashed\n"
      "    shards: [s0, s1]\n";
  const std::string right =
      "  - name: right\n"
      "    match: \"{c}:{d}:y\"\n"
      "    strategy: hashed\n"
      "    shards: [s1, s2]\n";
  check_edit_is_a_move("namespaces:\n" + left + right, "namespaces:\n" + right + left,
                       [](int i) { return std::to_string(i) + ":x:y"; });
}

TEST_CASE("an edit that places no key elsewhere is applied at once, not planned") {
  RedisServer a, b, c;
  std::vector<RedisServer*> shards = {&a, &b, &c};
  SantralProcess santral(shards_yaml(shards) + kSettings);
  auto client = santral.client();
  KeyName key = [](int i) { return "key:" + std::to_string(i); };
  for (int i = 0; i < kKeys; ++i) client.append({"SET", key(i), value_of(i)});
  for (int i = 0; i < kKeys; ++i) REQUIRE(client.get_reply().is_ok());
  auto before = where(shards);
  auto version = client.command({"SANTRAL", "SHARDMAP"}).str;

  rewrite(santral, shards_yaml(shards) + kSettings +
                       "read_from: prefer-replica\n"
                       "near_cache: {enabled: true, min_reads_per_sec: 50}\n");
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO("SANTRAL RELOAD: " << reload.str);
  REQUIRE(reload.type == Reply::Type::Status);
  CHECK(reload.str.find("planned") == std::string::npos);
  CHECK(reshard_status(client)["state"] == "idle");
  // In force at once: the map's version moved on.
  CHECK(client.command({"SANTRAL", "SHARDMAP"}).str != version);
  CHECK(unreadable(client, key) == 0);
  CHECK(where(shards) == before);
}
