// SUBSCRIBE and friends through a fake client (subscriber connections from a real pool that
// never connects): which shards hear of a channel, and confirmations held until they have.
#include <catch2/catch.hpp>

#include <string>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/routes/subscriptions.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

std::string confirmation(std::string_view kind, std::string_view name, int count) {
  std::string out;
  protocol::RespWriter writer(out);
  writer.array_header(3);
  writer.bulk(kind);
  writer.bulk(name);
  writer.integer(count);
  return out;
}

// What the worker's pool sent to each shard so far.
std::uint64_t sent_to(FakeWorkerServices& worker, std::size_t shard) {
  return worker.stats().shards[worker.shard_map().shard(shard).name].requests;
}

}  // namespace

TEST_CASE("SUBSCRIBE goes to each channel's shard; the client is confirmed once all answer") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto plan = test::run(client, {"SUBSCRIBE", "news", "sport"}, router::route_subscription);
  CHECK(plan.kind == router::RouteKind::Subscription);
  CHECK(client.subscribed());
  auto slot = client.last_slot();
  REQUIRE(client.slots().at(slot).fragments == 2);
  for (std::size_t s = 0; s < 4; ++s) {
    int channels = (map.shard_for_key("news") == s) + (map.shard_for_key("sport") == s);
    CHECK(sent_to(worker, s) == static_cast<std::uint64_t>(channels));
  }
  CHECK(client.replies.empty());
  client.deliver(slot, 1, confirmation("subscribe", "sport", 1));
  REQUIRE_FALSE(client.answer(slot));
  client.deliver(slot, 0, confirmation("subscribe", "news", 1));
  // The client's own count: 1 then 2, not each shard's.
  CHECK(client.answer(slot) ==
        confirmation("subscribe", "news", 1) + confirmation("subscribe", "sport", 2));

  // Subscribed already: confirmed at once, nothing sent.
  test::run(client, {"SUBSCRIBE", "news"}, router::route_subscription);
  REQUIRE(client.replies.size() == 1);
  CHECK(client.replies[0] == confirmation("subscribe", "news", 2));
}

TEST_CASE("a shard that refuses a subscription makes the client's answer its error") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::run(client, {"PSUBSCRIBE", "n*"}, router::route_subscription);
  auto slot = client.last_slot();
  REQUIRE(client.slots().at(slot).fragments == 4);  // a pattern may match on every shard
  for (std::size_t s = 0; s < 4; ++s) CHECK(sent_to(worker, s) == 1);
  client.deliver(slot, 0, confirmation("psubscribe", "n*", 1));
  client.deliver(slot, 1, "-ERR refused\r\n");
  client.deliver(slot, 2, confirmation("psubscribe", "n*", 1));
  client.deliver(slot, 3, confirmation("psubscribe", "n*", 1));
  CHECK(client.answer(slot) == "-ERR refused\r\n");
}

TEST_CASE("UNSUBSCRIBE with no channel leaves every channel, and the count reaches 0") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::run(client, {"SUBSCRIBE", "a"}, router::route_subscription);
  test::run(client, {"UNSUBSCRIBE"}, router::route_subscription);
  auto slot = client.last_slot();
  client.deliver(slot, 0, confirmation("unsubscribe", "a", 0));
  CHECK(client.answer(slot) == confirmation("unsubscribe", "a", 0));
  CHECK_FALSE(client.subscribed());
}

TEST_CASE("keyspace channels go to the key's shard, keyevent channels to every shard") {
  FakeWorkerServices worker(test::kFourShards);
  const auto& map = worker.shard_map();
  CHECK(router::channel_shards(map, "__keyspace@0__:user:1", false) ==
        std::vector<std::size_t>{map.shard_for_key("user:1")});
  CHECK(router::channel_shards(map, "__keyevent@0__:del", false).size() == 4);
  CHECK(router::channel_shards(map, "plain", false) ==
        std::vector<std::size_t>{map.shard_for_key("plain")});
}

TEST_CASE("a message reaches the client as a RESP3 push or a RESP2 array, as it speaks") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  std::string message = "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n";
  client.subscriptions().message(client, 0, message);
  client.state().protocol = 3;
  client.subscriptions().message(client, 0, message);
  REQUIRE(client.pushed.size() == 2);
  CHECK(client.pushed[0] == message);
  CHECK(client.pushed[1] == ">" + message.substr(1));
}
