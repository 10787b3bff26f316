// SANTRAL SHARDMAP through a fake client: every shard of the map in force, with how this
// worker's pool sees its server (never connected here).
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

TEST_CASE("SANTRAL SHARDMAP lists each shard's primary, its address and its state") {
  FakeWorkerServices worker(test::kFourShards + "hash: fnv1a_64\n");
  FakeRequestContext client(worker);
  auto plan = test::run(client, {"SANTRAL", "SHARDMAP"}, router::run_local);
  REQUIRE(plan.kind == router::RouteKind::Local);
  REQUIRE(client.replies.size() == 1);
  const auto& text = client.replies[0];
  CHECK(text.front() == '$');
  CHECK(text.find("version:1\n") != std::string::npos);
  CHECK(text.find("hash:fnv1a_64\n") != std::string::npos);
  for (int s = 0; s < 4; ++s) {
    INFO(s);
    CHECK(text.find("shard:shard" + std::to_string(s) + " role:primary address:127.0.0.1:700" +
                    std::to_string(s) + " weight:1 " + "state:connecting") != std::string::npos);
  }
  CHECK(text.find("last_failover") == std::string::npos);

  worker.shared().failovers["shard2"] = {1700000000, "127.0.0.1:7002", "127.0.0.1:7102"};
  test::run(client, {"SANTRAL", "SHARDMAP"}, router::run_local);
  CHECK(client.replies[1].find("last_failover:2023-11-14T22:13:20Z shard:shard2 "
                               "from:127.0.0.1:7002 to:127.0.0.1:7102") != std::string::npos);
}
