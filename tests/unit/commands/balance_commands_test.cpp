// SANTRAL BALANCE PLAN through a fake client and a fake server
// (tests/support/fake_control_plane.h): how its options are read, and how the server's answer
// reaches the client.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "router/runtime/control_plane.h"
#include "tests/support/fake_control_plane.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::bulk;
using test::FakeControlPlane;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using Answer = router::ControlPlane::BalanceAnswer;

namespace {

const std::string kBalanceSyntax =
    "-ERR santral: syntax error; use SANTRAL BALANCE PLAN [BY ops|keys|bytes] [RATIO <r>=1.2] "
    "[SAMPLES <n>] [WINDOW <ms>]\r\n";

}  // namespace

TEST_CASE("SANTRAL BALANCE refuses what is not PLAN with well-formed options") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  const std::vector<std::vector<std::string>> refused = {
      {"SANTRAL", "BALANCE", "APPLY"},
      {"SANTRAL", "BALANCE", "PLAN", "BY"},  // an option without its value
      {"SANTRAL", "BALANCE", "PLAN", "BY", "memory"},
      {"SANTRAL", "BALANCE", "PLAN", "RATIO", "0.9"},  // below 1
      {"SANTRAL", "BALANCE", "PLAN", "RATIO", "1001"},
      {"SANTRAL", "BALANCE", "PLAN", "RATIO", "1.5x"},
      {"SANTRAL", "BALANCE", "PLAN", "RATIO", "nan"},
      {"SANTRAL", "BALANCE", "PLAN", "SAMPLES", "0"},
      {"SANTRAL", "BALANCE", "PLAN", "SAMPLES", "100001"},
      {"SANTRAL", "BALANCE", "PLAN", "SAMPLES", "-5"},
      {"SANTRAL", "BALANCE", "PLAN", "WINDOW", "60001"},
      {"SANTRAL", "BALANCE", "PLAN", "WINDOW", "soon"},
      {"SANTRAL", "BALANCE", "PLAN", "DRY", "RUN"},
  };
  for (const auto& args : refused) {
    INFO(args.back());
    CHECK(test::ask_local(client, args) == kBalanceSyntax);
  }
  CHECK(server.balances.empty());
  CHECK(client.opened_slots() == 0);
}

TEST_CASE("SANTRAL BALANCE PLAN asks the server with the defaults, or the options given") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "BALANCE", "plan"}, router::run_local);
  test::run(client,
            {"SANTRAL", "BALANCE", "PLAN", "by", "BYTES", "ratio", "1.5", "Samples", "100000",
             "WINDOW", "0"},
            router::run_local);
  test::run(client, {"SANTRAL", "BALANCE", "PLAN", "RATIO", "1", "BY", "keys"}, router::run_local);
  REQUIRE(server.balances.size() == 3);
  CHECK(client.replies.empty());

  const auto& defaults = server.balances[0].request;
  CHECK(defaults.by == "ops");
  CHECK(defaults.target_ratio == 1.2);
  CHECK(defaults.samples == 400);
  CHECK(defaults.window_ms == 1000);

  const auto& given = server.balances[1].request;
  CHECK(given.by == "bytes");  // lowered
  CHECK(given.target_ratio == 1.5);
  CHECK(given.samples == 100000);
  CHECK(given.window_ms == 0);

  CHECK(server.balances[2].request.by == "keys");
  CHECK(server.balances[2].request.target_ratio == 1);
}

TEST_CASE("SANTRAL BALANCE PLAN answers the report, the proposed config after its marker") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  for (int i = 0; i < 3; ++i) test::run(client, {"SANTRAL", "BALANCE", "PLAN"}, router::run_local);
  REQUIRE(server.balances.size() == 3);

  server.answer_and_poll(server.balances[0].done, Answer{"", "balanced already\n", ""});
  CHECK(client.answer(1) == bulk("balanced already\n"));

  server.answer_and_poll(server.balances[1].done,
                         Answer{"", "shard0 is busiest\n", "shards:\n  - {name: shard0}\n"});
  CHECK(client.answer(2) ==
        bulk("shard0 is busiest\n--- proposed config ---\nshards:\n  - {name: shard0}\n"));

  server.answer_and_poll(
      server.balances[2].done,
      Answer{"ERR santral: a move is moving; balance once it is over (SANTRAL RESHARD STATUS)",
             "ignored", "ignored"});
  CHECK(client.answer(3) ==
        "-ERR santral: a move is moving; balance once it is over (SANTRAL RESHARD STATUS)\r\n");
  CHECK(client.idle());
}
