// route_split through a fake client: one sub-command per shard carrying that shard's keys,
// one slot whose fragments are merged back into the client's key order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::RouteKind;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using test::PlannedRequest;

namespace {

// Keys of distinct lengths on exactly three shards, in an order that interleaves them (the
// first shard's keys are not all first).
std::vector<std::string> keys_on_three_shards(const placement::ShardMap& map) {
  std::map<std::size_t, std::vector<std::string>> by_shard;
  std::string key = "k";
  while (by_shard.size() < 3 || std::any_of(by_shard.begin(), by_shard.end(),
                                            [](const auto& s) { return s.second.size() < 2; })) {
    key += "x";
    std::size_t shard = map.shard_for_key(key);
    if (by_shard.size() < 3 || by_shard.contains(shard)) by_shard[shard].push_back(key);
  }
  std::vector<std::string> keys;
  for (std::size_t round = 0; round < 2; ++round)
    for (auto& [shard, on_it] : by_shard) keys.push_back(on_it[round]);
  return keys;
}

std::string command_bytes(std::vector<std::string_view> args) {
  std::string out;
  protocol::RespWriter(out).command(args);
  return out;
}

std::string bulk_array(const std::vector<std::string>& values) {
  std::string out;
  protocol::RespWriter writer(out);
  writer.array_header(values.size());
  for (const auto& value : values) writer.bulk(value);
  return out;
}

// The shards of `keys` in the order their first key appears: the fragments' order.
std::vector<std::size_t> fragment_shards(const placement::ShardMap& map,
                                         const std::vector<std::string>& keys) {
  std::vector<std::size_t> shards;
  for (const auto& key : keys)
    if (std::find(shards.begin(), shards.end(), map.shard_for_key(key)) == shards.end())
      shards.push_back(map.shard_for_key(key));
  return shards;
}

}  // namespace

TEST_CASE("MGET over three shards: one slot of three fragments, one MGET per shard") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto keys = keys_on_three_shards(map);
  std::vector<std::string> args = {"MGET"};
  args.insert(args.end(), keys.begin(), keys.end());
  PlannedRequest mget(client, args);
  REQUIRE(mget.plan().kind == RouteKind::Split);
  router::route_split(mget.routed());

  REQUIRE(client.opened_slots() == 1);
  auto slot = client.last_slot();
  CHECK(client.slots().at(slot).fragments == 3);
  CHECK(client.forwarded.empty());  // sub-commands, not the client's bytes

  auto shards = fragment_shards(map, keys);
  REQUIRE(shards.size() == 3);
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    INFO("shard " << s);
    std::vector<std::string_view> sub = {"MGET"};
    for (const auto& key : keys)
      if (map.shard_for_key(key) == s) sub.push_back(key);
    bool used = sub.size() > 1;
    CHECK(client.requests_to(s) == (used ? 1 : 0));
    // Only the counters show what left: an MGET of this shard's keys has this many bytes.
    CHECK(client.bytes_to(s) == (used ? command_bytes(sub).size() : 0));
  }

  // The shards answer out of order, the last fragment first; each value names its key.
  for (std::size_t f = shards.size(); f-- > 0;) {
    std::vector<std::string> values;
    for (const auto& key : keys)
      if (map.shard_for_key(key) == shards[f]) values.push_back("v:" + key);
    REQUIRE_FALSE(client.answer(slot));
    client.deliver(slot, static_cast<std::uint32_t>(f), bulk_array(values));
  }
  std::vector<std::string> in_client_order;
  for (const auto& key : keys) in_client_order.push_back("v:" + key);
  CHECK(client.answer(slot) == bulk_array(in_client_order));
}

TEST_CASE("MSET carries each key's value to the key's shard; all OK answers OK") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto keys = keys_on_three_shards(map);
  std::vector<std::string> args = {"MSET"};
  for (const auto& key : keys) {
    args.push_back(key);
    args.push_back("value-of-" + key);
  }
  test::run(client, args, router::route_split);
  auto slot = client.last_slot();
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    std::vector<std::string> pairs;
    std::vector<std::string_view> sub = {"MSET"};
    for (const auto& key : keys)
      if (map.shard_for_key(key) == s) pairs.insert(pairs.end(), {key, "value-of-" + key});
    sub.insert(sub.end(), pairs.begin(), pairs.end());
    CHECK(client.bytes_to(s) == (sub.size() > 1 ? command_bytes(sub).size() : 0));
  }
  client.deliver(slot, 1, "+OK\r\n");
  client.deliver(slot, 0, "+OK\r\n");
  client.deliver(slot, 2, "+OK\r\n");
  CHECK(client.answer(slot) == "+OK\r\n");
}

TEST_CASE("DEL over several shards answers the sum of what each deleted") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  auto keys = keys_on_three_shards(worker.shard_map());
  std::vector<std::string> args = {"DEL"};
  args.insert(args.end(), keys.begin(), keys.end());
  test::run(client, args, router::route_split);
  auto slot = client.last_slot();
  client.deliver(slot, 2, ":2\r\n");
  client.deliver(slot, 0, ":0\r\n");
  client.deliver(slot, 1, ":1\r\n");
  CHECK(client.answer(slot) == ":3\r\n");
}

TEST_CASE("a down shard's fragment fails at once and the client hears which shard") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto keys = keys_on_three_shards(map);
  auto shards = fragment_shards(map, keys);
  client.mark_down(shards[1], "refused for the test");
  std::vector<std::string> args = {"MGET"};
  args.insert(args.end(), keys.begin(), keys.end());
  test::run(client, args, router::route_split);
  auto slot = client.last_slot();
  CHECK(client.requests_to(shards[1]) == 0);  // never queued
  REQUIRE_FALSE(client.answer(slot));         // the others still owe theirs
  for (std::uint32_t f : {0u, 2u}) {
    std::vector<std::string> values;
    for (const auto& key : keys)
      if (map.shard_for_key(key) == shards[f]) values.push_back("v");
    client.deliver(slot, f, bulk_array(values));
  }
  auto answer = client.answer(slot);
  REQUIRE(answer);
  CHECK(answer->front() == '-');
  CHECK(answer->find(map.shard(shards[1]).name) != std::string::npos);
  CHECK(answer->find("refused for the test") != std::string::npos);
}
