// SANTRAL SHARDMAP through a fake client: every shard of the map in force, with how this
// worker's pool sees its server (never connected here).
#include <catch2/catch.hpp>

#include <string>

#include "router/runtime/control_plane.h"
#include "tests/support/fake_control_plane.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeControlPlane;
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

TEST_CASE("SANTRAL SHARDMAP shows a failover that lost writes, and what becomes of writes") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  router::LostWrites lost;
  lost.failover = {1700000000, "127.0.0.1:7001", "127.0.0.1:7101"};
  lost.verdict.lineage = router::Lineage::NeverSynced;
  lost.verdict.why = "it never synced with 127.0.0.1:7001 (...)";
  worker.shared().lost_writes["shard1"] = lost;
  test::run(client, {"SANTRAL", "SHARDMAP"}, router::run_local);
  INFO(client.replies[0]);
  CHECK(client.replies[0].find(
            "lost_writes:2023-11-14T22:13:20Z shard:shard1 from:127.0.0.1:7001 "
            "to:127.0.0.1:7101 lineage:never_synced writes:refused why:it never synced with "
            "127.0.0.1:7001 (...); SANTRAL FAILOVER ACCEPT shard1 lets writes go\n") !=
        std::string::npos);

  worker.shared().lost_writes["shard1"].writes = router::LostWrites::Writes::Accepted;
  test::run(client, {"SANTRAL", "SHARDMAP"}, router::run_local);
  CHECK(client.replies[1].find("lineage:never_synced writes:accepted why:it never synced with "
                               "127.0.0.1:7001 (...)\n") != std::string::npos);
}

TEST_CASE("SANTRAL FAILOVER ACCEPT asks the server for the shard, and answers what it says") {
  using Answer = router::ControlPlane::FailoverAnswer;
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  // Anything but ACCEPT <shard> is refused here, without asking.
  CHECK(test::ask_local(client, {"SANTRAL", "FAILOVER", "shard1"}) ==
        "-ERR santral: syntax error; use SANTRAL FAILOVER ACCEPT <shard>\r\n");
  CHECK(test::ask_local(client, {"SANTRAL", "FAILOVER", "ACCEPT", "shard1", "now"}) ==
        "-ERR santral: syntax error; use SANTRAL FAILOVER ACCEPT <shard>\r\n");
  CHECK(server.failover_accepts.empty());

  test::run(client, {"SANTRAL", "FAILOVER", "accept", "shard1"}, router::run_local);
  auto accepted = client.last_slot();
  test::run(client, {"SANTRAL", "FAILOVER", "ACCEPT", "nope"}, router::run_local);
  auto refused = client.last_slot();
  REQUIRE(server.failover_accepts.size() == 2);
  CHECK(server.failover_accepts[0].shard == "shard1");
  CHECK(server.failover_accepts[1].shard == "nope");
  server.answer_and_poll(server.failover_accepts[0].done,
                         Answer{"", "shard 'shard1' takes writes again, on 127.0.0.1:7101"});
  CHECK(client.answer(accepted) == "+OK shard 'shard1' takes writes again, on 127.0.0.1:7101\r\n");
  server.answer_and_poll(server.failover_accepts[1].done,
                         Answer{"ERR santral: nothing to accept for shard 'nope': no shard has "
                                "that name; SANTRAL SHARDMAP shows the shards and any "
                                "lost_writes line",
                                ""});
  CHECK(client.answer(refused).value_or("").starts_with(
      "-ERR santral: nothing to accept for shard 'nope'"));
  CHECK(client.idle());
}
