// route_gathered through a fake client: each key fetched from its own shard, the answer
// computed from the fetched values.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/merge/gathered/gather_rules.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::RouteKind;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using test::PlannedRequest;

namespace {

// Two keys on different shards.
std::pair<std::string, std::string> split_keys(const placement::ShardMap& map) {
  std::string a = "a", b;
  for (int i = 0;; ++i) {
    b = "b" + std::to_string(i);
    if (map.shard_for_key(b) != map.shard_for_key(a)) return {a, b};
  }
}

std::string members(std::vector<std::string_view> values) {
  std::string out;
  protocol::RespWriter writer(out);
  writer.array_header(values.size());
  for (auto value : values) writer.bulk(value);
  return out;
}

}  // namespace

TEST_CASE("SUNION across shards fetches each set from its shard and answers the union") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto [a, b] = split_keys(map);
  PlannedRequest sunion(client, {"SUNION", a, b});
  REQUIRE(sunion.plan().kind == RouteKind::Gathered);
  const auto& rule = *router::gather_rule(*sunion.plan().spec);
  REQUIRE(rule.fetch.size() == 1);
  router::route_gathered(sunion.routed());

  auto slot = client.last_slot();
  CHECK(client.slots().at(slot).fragments == 2);
  // One fetch per key, naming that key alone, on that key's shard.
  for (const auto& key : {a, b}) {
    std::vector<std::string_view> fetch = {rule.fetch[0].name, key};
    fetch.insert(fetch.end(), rule.fetch[0].after_key.begin(), rule.fetch[0].after_key.end());
    std::string bytes;
    protocol::RespWriter(bytes).command(fetch);
    CHECK(client.requests_to(map.shard_for_key(key)) == 1);
    CHECK(client.bytes_to(map.shard_for_key(key)) == bytes.size());
  }

  client.deliver(slot, 1, members({"y", "z"}));
  client.deliver(slot, 0, members({"x", "y"}));
  auto answer = client.answer(slot);
  REQUIRE(answer);
  CHECK(answer->starts_with("*3\r\n"));  // y once
  for (const char* member : {"$1\r\nx\r\n", "$1\r\ny\r\n", "$1\r\nz\r\n"})
    CHECK(answer->find(member) != std::string::npos);
}

TEST_CASE("SINTER across shards answers only what every set holds") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  auto [a, b] = split_keys(worker.shard_map());
  test::run(client, {"SINTER", a, b}, router::route_gathered);
  auto slot = client.last_slot();
  client.deliver(slot, 0, members({"x", "y", "w"}));
  client.deliver(slot, 1, members({"y", "z", "w"}));
  auto answer = client.answer(slot);
  REQUIRE(answer);
  CHECK(answer->starts_with("*2\r\n"));
  CHECK(answer->find("$1\r\nx\r\n") == std::string::npos);
  CHECK(answer->find("$1\r\ny\r\n") != std::string::npos);
  CHECK(answer->find("$1\r\nw\r\n") != std::string::npos);
}
