// SANTRAL ANALYZE through a fake client and a fake server (tests/support/fake_control_plane.h):
// how its options are read, and the forms the server's answer reaches the client in.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "router/analysis/raw_samples.h"
#include "router/analysis/shard_key_analysis.h"
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
using Answer = router::ControlPlane::AnalyzeAnswer;

namespace {

const std::string kAnalyzeSyntax =
    "-ERR santral: syntax error; use SANTRAL ANALYZE <namespace | key glob> [SECONDS <n>=10] "
    "[SAMPLE <rate>=0.05] [KEY <field | regex>] [FORMAT text|json]\r\n";

router::AnalysisReport a_report() {
  router::AnalysisReport report;
  report.target = "orders";
  report.namespace_name = "orders";
  report.seconds = 5;
  report.rate = 0.5;
  report.sampled = 40;
  report.sampled_all = 80;
  report.shards = 4;
  report.recommendation = "keep the shard key";
  return report;
}

}  // namespace

TEST_CASE("SANTRAL ANALYZE refuses bad options without asking the server") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  const std::vector<std::vector<std::string>> refused = {
      {"SANTRAL", "ANALYZE", "orders", "SECONDS"},  // an option without its value
      {"SANTRAL", "ANALYZE", "orders", "SECONDS", "0"},
      {"SANTRAL", "ANALYZE", "orders", "SECONDS", "3601"},
      {"SANTRAL", "ANALYZE", "orders", "SECONDS", "ten"},
      {"SANTRAL", "ANALYZE", "orders", "SAMPLE", "0"},
      {"SANTRAL", "ANALYZE", "orders", "SAMPLE", "1.5"},
      {"SANTRAL", "ANALYZE", "orders", "FORMAT", "yaml"},
      {"SANTRAL", "ANALYZE", "orders", "VERBOSE", "yes"},
  };
  for (const auto& args : refused) {
    INFO(args.back());
    CHECK(test::ask_local(client, args) == kAnalyzeSyntax);
  }
  CHECK(server.analyses.empty());
  CHECK(client.opened_slots() == 0);
}

TEST_CASE("SANTRAL ANALYZE asks the server for its target with the defaults, or the options") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "ANALYZE", "user:*"}, router::run_local);
  test::run(client,
            {"SANTRAL", "ANALYZE", "orders", "seconds", "3600", "SAMPLE", "1", "key", "{id}",
             "FORMAT", "JSON", "raw"},
            router::run_local);
  REQUIRE(server.analyses.size() == 2);
  CHECK(client.replies.empty());

  const auto& defaults = server.analyses[0].request;
  CHECK(defaults.target.target == "user:*");
  CHECK(defaults.target.candidate.empty());
  CHECK(defaults.seconds == 10);
  CHECK(defaults.rate == 0.05);
  CHECK_FALSE(defaults.raw);

  const auto& given = server.analyses[1].request;
  CHECK(given.target.target == "orders");
  CHECK(given.target.candidate == "{id}");
  CHECK(given.seconds == 3600);
  CHECK(given.rate == 1);
  CHECK(given.raw);
}

TEST_CASE("SANTRAL ANALYZE answers the report as text, with the proposed config after it") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "ANALYZE", "orders"}, router::run_local);
  test::run(client, {"SANTRAL", "ANALYZE", "orders", "FORMAT", "text"}, router::run_local);
  REQUIRE(server.analyses.size() == 2);
  auto text = router::report_text(a_report());
  REQUIRE_FALSE(text.empty());

  server.answer_and_poll(server.analyses[0].done, Answer{"", a_report(), "", {}});
  CHECK(client.answer(1) == bulk(text));
  server.answer_and_poll(server.analyses[1].done,
                         Answer{"", a_report(), "namespaces:\n  - {name: orders}\n", {}});
  CHECK(client.answer(2) ==
        bulk(text + "--- proposed config ---\nnamespaces:\n  - {name: orders}\n"));
}

TEST_CASE("SANTRAL ANALYZE FORMAT json answers the JSON report; RAW the sampled requests") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "ANALYZE", "orders", "FORMAT", "json"}, router::run_local);
  test::run(client, {"SANTRAL", "ANALYZE", "orders", "RAW", "FORMAT", "json"}, router::run_local);
  REQUIRE(server.analyses.size() == 2);

  server.answer_and_poll(server.analyses[0].done, Answer{"", a_report(), "ignored", {}});
  CHECK(client.answer(1) == bulk(router::report_json(a_report())));

  std::vector<router::SampledRequest> raw(2);
  raw[0].key = "orders:1";
  raw[0].command = "get";
  raw[1].command = "scan";
  raw[1].pattern = "orders:*";
  server.answer_and_poll(server.analyses[1].done, Answer{"", a_report(), "", raw});
  auto answer = client.answer(2);
  REQUIRE(answer);
  CHECK(*answer == router::raw_samples_reply(raw));
  std::vector<router::SampledRequest> back;
  std::string error;
  REQUIRE(router::read_raw_samples(*answer, back, error));
  REQUIRE(back.size() == 2);
  CHECK(back[0].key == "orders:1");
  CHECK(back[1].pattern == "orders:*");
}

TEST_CASE("SANTRAL ANALYZE answers the server's error, whatever the format") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "ANALYZE", "orders", "FORMAT", "json"}, router::run_local);
  test::run(client, {"SANTRAL", "ANALYZE", "orders", "RAW"}, router::run_local);
  const std::string busy =
      "ERR santral: an analysis is already running on this router; wait for it (at most its "
      "SECONDS) and ask again";
  for (auto& asked : server.analyses) server.answer_and_poll(asked.done, Answer{busy, {}, "", {}});
  CHECK(client.answer(1) == "-" + busy + "\r\n");
  CHECK(client.answer(2) == "-" + busy + "\r\n");
  CHECK(client.idle());
}
