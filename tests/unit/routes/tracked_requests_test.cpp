// note_tracked_request (router/routes/tracked_requests.h) through a fake client with CLIENT
// TRACKING on: a request is planned and routed as dispatch does, then noted; what the client's
// TrackedReads expect is read back with arrived() (the keys each reply will register, in the
// lanes' epoch), what it is told at once lands in its invalidations, and the lanes' table shows
// what NOLOOP forgets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/merge/gathered/gather_rules.h"
#include "router/routes/routing.h"
#include "router/routes/tracked_requests.h"
#include "router/tracking/tracked_reads.h"
#include "router/tracking/tracking_client.h"
#include "router/tracking/tracking_lanes.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::RouteKind;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

using Route = void (*)(const router::Routed&);

// What dispatch does with a request: routed by `route` (none: it opened no slot), then noted.
router::Plan track(FakeRequestContext& client, std::vector<std::string> args, Route route) {
  test::PlannedRequest request(client, std::move(args));
  auto before = client.opened_slots();
  if (route != nullptr) route(request.routed());
  router::note_tracked_request(request.routed(), before);
  return request.plan();
}

// What the reply to (slot, fragment) will register the client for, and in which lane epoch;
// taken out of the client's TrackedReads.
struct Expected {
  std::vector<std::string> keys;
  std::uint64_t epoch = 0;
  std::vector<std::string> own_write;  // a BCAST NOLOOP write's keys
};
Expected arrived(FakeRequestContext& client, std::uint64_t slot, std::uint32_t fragment) {
  Expected expected;
  client.tracked_reads().arrived(
      slot, fragment,
      [&expected](const std::string& key, std::uint64_t epoch) {
        expected.keys.push_back(key);
        expected.epoch = epoch;
      },
      [&expected](std::vector<std::string> keys) { expected.own_write = std::move(keys); });
  return expected;
}

std::pair<std::string, std::string> split_keys(const placement::ShardMap& map) {
  std::string a = "a", b;
  for (int i = 0;; ++i) {
    b = "b" + std::to_string(i);
    if (map.shard_for_key(b) != map.shard_for_key(a)) return {a, b};
  }
}

// Keys on three shards, interleaved: the first shard's keys are not all first.
std::vector<std::string> keys_on_three_shards(const placement::ShardMap& map) {
  std::map<std::size_t, std::vector<std::string>> by_shard;
  for (int i = 0;
       by_shard.size() < 3 || std::any_of(by_shard.begin(), by_shard.end(),
                                          [](const auto& s) { return s.second.size() < 2; });
       ++i) {
    std::string key = "key" + std::to_string(i);
    std::size_t shard = map.shard_for_key(key);
    if (by_shard.size() < 3 || by_shard.contains(shard)) by_shard[shard].push_back(key);
  }
  std::vector<std::string> keys;
  for (std::size_t round = 0; round < 2; ++round)
    for (auto& [shard, on_it] : by_shard) keys.push_back(on_it[round]);
  return keys;
}

std::string command_bytes(const std::vector<std::string>& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  protocol::RespWriter(out).command(views);
  return out;
}

std::string bulk_array(const std::vector<std::string>& values) {
  std::string out;
  protocol::RespWriter writer(out);
  writer.array_header(values.size());
  for (const auto& value : values) writer.bulk(value);
  return out;
}

void tracking_on(FakeRequestContext& client, std::vector<std::string> options = {}) {
  std::vector<std::string> args = {"CLIENT", "TRACKING", "ON"};
  args.insert(args.end(), options.begin(), options.end());
  REQUIRE(test::ask_local(client, args) == "+OK\r\n");
}

}  // namespace

TEST_CASE("a tracked GET expects its key from its slot's reply, in the lanes' epoch") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);

  // Tracking off: nothing is expected.
  track(client, {"GET", "k"}, router::route_single_shard);
  CHECK(client.tracked_reads().empty());

  tracking_on(client);
  track(client, {"GET", "k"}, router::route_single_shard);
  auto slot = client.last_slot();
  CHECK(arrived(client, slot, 1).keys.empty());      // one fragment only
  CHECK(arrived(client, slot - 1, 0).keys.empty());  // not the untracked GET's
  auto expected = arrived(client, slot, 0);
  CHECK(expected.keys == std::vector<std::string>{"k"});
  CHECK(expected.epoch == worker.lanes().epoch());
  CHECK(client.tracked_reads().empty());
  CHECK(client.invalidations.empty());

  // A read whose route opened no slot (answered at once) expects nothing.
  track(client, {"GET", "k"}, nullptr);
  CHECK(client.tracked_reads().empty());
  CHECK(client.invalidations.empty());
}

TEST_CASE("a split MGET expects each shard's keys from that shard's fragment") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client);
  const auto& map = worker.shard_map();
  auto keys = keys_on_three_shards(map);
  std::vector<std::string> args = {"MGET"};
  args.insert(args.end(), keys.begin(), keys.end());
  auto plan = track(client, args, router::route_split);
  REQUIRE(plan.kind == RouteKind::Split);
  auto slot = client.last_slot();
  REQUIRE(client.slots().at(slot).fragments == 3);

  // The shards in the order their first key comes: the fragments' order.
  std::vector<std::size_t> shards;
  for (const auto& key : keys)
    if (std::find(shards.begin(), shards.end(), map.shard_for_key(key)) == shards.end())
      shards.push_back(map.shard_for_key(key));
  REQUIRE(shards.size() == 3);

  std::vector<std::vector<std::string>> per_fragment;
  for (std::uint32_t f = 0; f < 3; ++f) {
    auto expected = arrived(client, slot, f);
    CHECK(expected.epoch == worker.lanes().epoch());
    // That shard's keys, in the client's order, and the MGET sent to it names them.
    std::vector<std::string> on_shard;
    for (const auto& key : keys)
      if (map.shard_for_key(key) == shards[f]) on_shard.push_back(key);
    CHECK(expected.keys == on_shard);
    std::vector<std::string> sub = {"MGET"};
    sub.insert(sub.end(), on_shard.begin(), on_shard.end());
    CHECK(client.bytes_to(shards[f]) == command_bytes(sub).size());
    per_fragment.push_back(expected.keys);
  }
  CHECK(client.tracked_reads().empty());

  // The route numbers its fragments the same way: each fragment's reply, values named after
  // the keys expected from it, merges back into the client's key order.
  for (std::uint32_t f = 0; f < 3; ++f) {
    std::vector<std::string> values;
    for (const auto& key : per_fragment[f]) values.push_back("v:" + key);
    client.deliver(slot, f, bulk_array(values));
  }
  std::vector<std::string> in_order;
  in_order.reserve(keys.size());
  for (const auto& key : keys) in_order.push_back("v:" + key);
  CHECK(client.answer(slot) == bulk_array(in_order));
}

TEST_CASE("a gathered read expects each key from the first of its fetches") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client);
  const auto& map = worker.shard_map();
  auto [a, b] = split_keys(map);
  // ZUNION fetches each key twice (ZRANGE, then SMEMBERS): a's are fragments 0 and 1.
  auto plan = track(client, {"ZUNION", "2", a, b}, router::route_gathered);
  REQUIRE(plan.kind == RouteKind::Gathered);
  REQUIRE(router::gather_rule(*plan.spec)->fetch.size() == 2);
  auto slot = client.last_slot();
  REQUIRE(client.slots().at(slot).fragments == 4);
  CHECK(client.requests_to(map.shard_for_key(a)) == 2);
  CHECK(client.bytes_to(map.shard_for_key(a)) ==
        command_bytes({"ZRANGE", a, "0", "-1", "WITHSCORES"}).size() +
            command_bytes({"SMEMBERS", a}).size());

  CHECK(arrived(client, slot, 1).keys.empty());
  CHECK(arrived(client, slot, 3).keys.empty());
  auto first = arrived(client, slot, 0);
  CHECK(first.keys == std::vector<std::string>{a});
  CHECK(first.epoch == worker.lanes().epoch());
  CHECK(arrived(client, slot, 2).keys == std::vector<std::string>{b});
  CHECK(client.tracked_reads().empty());
}

TEST_CASE("a read that nothing on a lane would hear the writes of is invalidated at once") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client);
  auto plan = track(client, {"XREAD", "BLOCK", "0", "STREAMS", "s", "0"}, nullptr);
  REQUIRE(plan.kind == RouteKind::Blocking);
  CHECK(client.tracked_reads().empty());
  CHECK(client.invalidations == std::vector<std::string>{router::invalidation_push("s")});
}

TEST_CASE("OPTIN tracks the read after CLIENT CACHING yes, and that one only") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client, {"OPTIN"});
  track(client, {"GET", "a"}, router::route_single_shard);
  CHECK(client.tracked_reads().empty());

  // CLIENT's own subcommands leave the CACHING they set for the next command.
  track(client, {"CLIENT", "CACHING", "YES"}, router::run_local);
  CHECK(client.state().tracking.caching == true);
  track(client, {"GET", "b"}, router::route_single_shard);
  CHECK(arrived(client, client.last_slot(), 0).keys == std::vector<std::string>{"b"});
  CHECK_FALSE(client.state().tracking.caching.has_value());  // used up

  track(client, {"GET", "c"}, router::route_single_shard);
  CHECK(client.tracked_reads().empty());
}

TEST_CASE("OPTOUT tracks every read but the one after CLIENT CACHING no") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client, {"OPTOUT"});
  track(client, {"CLIENT", "CACHING", "NO"}, router::run_local);
  track(client, {"GET", "a"}, router::route_single_shard);
  CHECK(client.tracked_reads().empty());
  track(client, {"GET", "b"}, router::route_single_shard);
  CHECK(arrived(client, client.last_slot(), 0).keys == std::vector<std::string>{"b"});
}

TEST_CASE("reads inside MULTI are tracked by an EXISTS on the client's lane when queued") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client);
  CHECK(worker.lanes().barrier_connections().empty());
  track(client, {"MULTI"}, router::route_transaction);
  auto plan = track(client, {"GET", "a"}, router::route_queued);
  REQUIRE(plan.kind == RouteKind::Queued);
  track(client, {"GET", "a"}, router::route_queued);
  CHECK(client.tracked_reads().empty());
  // The lane to a's shard carries the EXISTS, which registers the client when answered.
  CHECK(worker.lanes().barrier_connections().size() == 1);
  track(client, {"EXEC"}, router::route_transaction);
  CHECK(client.invalidations.empty());  // the lane will tell of later writes: nothing to drop

  track(client, {"MULTI"}, router::route_transaction);
  track(client, {"GET", "b"}, router::route_queued);
  track(client, {"DISCARD"}, router::route_transaction);
  CHECK(client.invalidations.empty());
}

TEST_CASE("OPTIN: CLIENT CACHING yes before MULTI covers every read of the transaction") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  tracking_on(client, {"OPTIN"});
  track(client, {"CLIENT", "CACHING", "YES"}, router::run_local);
  track(client, {"MULTI"}, router::route_transaction);
  track(client, {"GET", "a"}, router::route_queued);
  track(client, {"GET", "a2"}, router::route_queued);
  track(client, {"EXEC"}, router::route_transaction);
  CHECK(client.invalidations.empty());  // tracked on the lane, not dropped after EXEC
  CHECK_FALSE(client.state().tracking.caching.has_value());

  // Used up with the transaction: the next one's reads are not tracked.
  track(client, {"MULTI"}, router::route_transaction);
  track(client, {"GET", "c"}, router::route_queued);
  track(client, {"EXEC"}, router::route_transaction);
  CHECK(client.invalidations.empty());
}

TEST_CASE("NOLOOP: a client's write forgets its own read of the key, not another's") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext looping(worker, 1), noloop(worker, 2), reader(worker, 3);
  tracking_on(looping);
  tracking_on(noloop, {"NOLOOP"});
  tracking_on(reader);
  auto& lanes = worker.lanes();
  for (std::uint64_t client : {1, 2, 3}) lanes.read_arrived(client, "k", lanes.epoch());
  lanes.read_arrived(1, "m", lanes.epoch());
  lanes.read_arrived(2, "j", lanes.epoch());
  // Which lane a push comes on does not matter for plain (not BCAST) tracking.
  auto push = [&lanes](const std::string& key) {
    lanes.pushed({0, 0, false}, router::invalidation_push(key));
  };

  // The NOLOOP client writes k: the other readers are told, the writer is not.
  track(noloop, {"SET", "k", "v"}, router::route_single_shard);
  push("k");
  auto k = router::invalidation_push("k");
  CHECK(looping.invalidations == std::vector<std::string>{k});
  CHECK(reader.invalidations == std::vector<std::string>{k});
  CHECK(noloop.invalidations.empty());

  // Without NOLOOP, the writer is told of its own write.
  track(looping, {"SET", "m", "v"}, router::route_single_shard);
  push("m");
  CHECK(looping.invalidations == std::vector<std::string>{k, router::invalidation_push("m")});

  // A read forgets nothing, NOLOOP or not.
  track(noloop, {"GET", "j"}, router::route_single_shard);
  push("j");
  CHECK(noloop.invalidations == std::vector<std::string>{router::invalidation_push("j")});
  CHECK(lanes.tracked_keys() == 0);
}
