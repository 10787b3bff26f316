// dispatch() through a fake client: the plan's kind picks the route, errors are answered
// before any routing, and a request that must wait for earlier replies is held.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "placement/shard_map.h"
#include "router/plan/dispatch.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::Dispatched;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

Dispatched dispatch(FakeRequestContext& client, std::vector<std::string> args) {
  return test::dispatch_request(client, std::move(args));
}

}  // namespace

TEST_CASE("a GET is forwarded to its key's shard, a PING answered here, MGET split") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  CHECK(dispatch(client, {"GET", "user:1"}) == Dispatched::Done);
  REQUIRE(client.forwarded.size() == 1);
  CHECK(client.forwarded[0].shard == map.shard_for_key("user:1"));
  CHECK(client.state().last_command == "get");
  CHECK(client.state().routed_version == worker.topology().version);

  CHECK(dispatch(client, {"PING"}) == Dispatched::Done);
  CHECK(client.replies == std::vector<std::string>{"+PONG\r\n"});

  std::string other = "b";
  for (int i = 0; map.shard_for_key(other) == map.shard_for_key("a"); ++i)
    other = "b" + std::to_string(i);
  dispatch(client, {"MGET", "a", other});
  CHECK(client.slots().at(client.last_slot()).fragments == 2);
  CHECK(client.forwarded.size() == 1);
}

TEST_CASE("an unknown command and a wrong arity are answered, and nothing is sent") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  dispatch(client, {"NOSUCH", "x"});
  dispatch(client, {"GET"});
  REQUIRE(client.replies.size() == 2);
  CHECK(client.replies[0].starts_with("-ERR unknown command 'NOSUCH'"));
  CHECK(client.replies[1] == "-ERR wrong number of arguments for 'get' command\r\n");
  CHECK(client.opened_slots() == 0);
  CHECK(client.forwarded.empty());
}

TEST_CASE("HELLO waits until every earlier request of the client is answered") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  dispatch(client, {"GET", "k"});
  CHECK(dispatch(client, {"HELLO", "3"}) == Dispatched::AfterEarlierReplies);
  CHECK(client.state().protocol == 2);
  client.deliver(client.forwarded[0].slot, 0, "$-1\r\n");
  CHECK(dispatch(client, {"HELLO", "3"}) == Dispatched::Done);
  CHECK(client.state().protocol == 3);
}

TEST_CASE("a router whose fleet map was refused answers keyed requests with why") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  worker.shared().fleet_serve_until_ns = std::numeric_limits<std::int64_t>::max() - 1;  // a fleet
  worker.shared().fleet_map_refused = 7;
  dispatch(client, {"GET", "k"});
  CHECK(client.forwarded.empty());
  REQUIRE(client.replies.size() == 1);
  CHECK(client.replies[0].starts_with("-CLUSTERDOWN"));
  CHECK(client.replies[0].find("map version 7,") != std::string::npos);
  dispatch(client, {"PING"});  // answered here: still answered
  CHECK(client.replies.back() == "+PONG\r\n");
}
