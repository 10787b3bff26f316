// SANTRAL ANALYZE on a live cluster: real shards, real clients writing while the analyzer samples,
// through the command, `santral analyze`, GET /analyze, and through a fleet's other router.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;
using nlohmann::json;

namespace {

// events by {id} in numeric ranges of a million; the clients write rising ids past 3,000,000,
// so every new event lands on the last range's shard.
const std::string kEvents =
    "hash_tag: \"\"\n"
    "namespaces:\n"
    "  - name: events\n"
    "    match: \"event:{tenant}:{id}\"\n"
    "    shard_key: id\n"
    "    strategy: range\n"
    "    order: numeric\n"
    "    ranges:\n"
    "      - {shard: shard0, to: 1000000}\n"
    "      - {shard: shard1, from: 1000000, to: 2000000}\n"
    "      - {shard: shard2, from: 2000000, to: 3000000}\n"
    "      - {shard: shard3, from: 3000000}\n";

// Clients writing new events (rising ids, one of three tenants) and reading recent ones, until
// stopped.
class EventWriters {
 public:
  EventWriters(int port, int threads) {
    for (int t = 0; t < threads; ++t)
      threads_.emplace_back([this, port] {
        RedisClient client(port);
        while (!stop_) {
          for (int i = 0; i < 20; ++i) {
            long id = 3'000'000 + next_++;
            std::string key = "event:t" + std::to_string(id % 3) + ":" + std::to_string(id);
            client.append({"SET", key, "x"});
            client.append({"GET", key});
          }
          for (int i = 0; i < 40; ++i)
            if (client.get_reply().is_error()) ++errors_;
          ++batches_;
        }
      });
  }
  ~EventWriters() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  long batches() const { return batches_; }
  long errors() const { return errors_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> next_{0}, batches_{0}, errors_{0};
  std::vector<std::thread> threads_;
};

json analyze_json(RedisClient& client, std::initializer_list<std::string_view> args) {
  std::vector<std::string> command{"SANTRAL", "ANALYZE"};
  for (auto a : args) command.emplace_back(a);
  command.emplace_back("FORMAT");
  command.emplace_back("json");
  auto reply = client.command(command);
  INFO(reply.str);
  REQUIRE(reply.type == Reply::Type::String);
  return json::parse(reply.str);
}

const json* row(const json& report, const std::string& strategy, const std::string& key) {
  for (const auto& w : report["whatif"])
    if (w["strategy"] == strategy && w["key"] == key) return &w;
  return nullptr;
}

}  // namespace

TEST_CASE("analyze: live writes of rising ids are flagged monotonic and hashing is advised") {
  RedisServer a, b, c, d;
  int admin_port = free_loopback_port();
  SantralProcess santral(
      SantralProcess::config_for({&a, &b, &c, &d}, kEvents +
                                                       "admin:\n  listen: "
                                                       "127.0.0.1:" +
                                                       std::to_string(admin_port) + "\n"));
  auto client = santral.client(30000);
  EventWriters writers(santral.port(), 2);
  REQUIRE(wait_until([&] { return writers.batches() > 20; }, 10000));

  auto report =
      analyze_json(client, {"events", "SECONDS", "1.5", "SAMPLE", "0.2", "KEY", "tenant"});
  INFO(report.dump(2));
  CHECK(report["namespace"] == "events");
  CHECK(report["routers"].size() == 1);
  CHECK(report["sampled"].get<long>() > 100);
  CHECK(report["stored"].get<long>() > 0);  // keys drawn from the shards
  REQUIRE(report["keys"].size() == 2);
  const auto& id = report["keys"][0];
  CHECK(id["name"] == "{id}");
  CHECK(id["monotonic"] == true);
  CHECK(id["monotonicity"].get<double>() > 0.9);
  const auto& tenant = report["keys"][1];
  CHECK(tenant["name"] == "{tenant}");
  CHECK(tenant["low_cardinality"] == true);  // three tenants for four shards
  // Every sampled request reached one shard, the writes all the last range's.
  bool writes_seen = false;
  for (const auto& d : report["distribution"]) {
    CHECK(d["several"] == 0);
    CHECK(d["all"] == 0);
    writes_seen = writes_seen || (d["kind"] == "write" && d["one"].get<long>() > 0);
  }
  CHECK(writes_seen);
  const auto* current = row(report, "current (range)", "{id}");
  REQUIRE(current != nullptr);
  CHECK((*current)["hot_spot"].get<double>() > 3.5);
  CHECK((*current)["excluded"].get<std::string>().find("rises with time") != std::string::npos);
  // The recommendation is a hashing of {id} (or a directory), never a range, never {tenant}.
  const json* chosen = nullptr;
  for (const auto& w : report["whatif"])
    if (w["recommended"] == true) chosen = &w;
  REQUIRE(chosen != nullptr);
  CHECK((*chosen)["key"] == "{id}");
  CHECK(((*chosen)["strategy"] == "hashed" || (*chosen)["strategy"] == "slots" ||
         (*chosen)["strategy"] == "directory"));
  CHECK((*chosen)["hot_spot"].get<double>() < 1.5);
  CHECK(report["config_lines"].get<std::string>().find("name: events") != std::string::npos);

  // The same through HTTP, with the config that applies it.
  auto http = http_request(admin_port, "GET", "/analyze?target=events&seconds=0.5&sample=0.5");
  INFO(http.body);
  REQUIRE(http.status == 200);
  auto body = json::parse(http.body);
  CHECK(body["namespace"] == "events");
  CHECK(body["config_text"].get<std::string>().find("strategy: range") == std::string::npos);
  CHECK(body["config_text"].get<std::string>().find("name: events") != std::string::npos);
  CHECK(http_request(admin_port, "GET", "/analyze?seconds=1").status == 400);
  // Parameters are percent-decoded; a query that is not one says what to encode.
  auto encoded = http_request(admin_port, "GET",
                              "/analyze?target=ev%65nts&seconds=0.2&key=%5Eevent%3A(t%5Cd%2B)%3A");
  INFO(encoded.body);
  REQUIRE(encoded.status == 200);
  auto decoded = json::parse(encoded.body);
  CHECK(decoded["namespace"] == "events");
  CHECK(decoded["keys"][1]["name"] == "regex ^event:(t\\d+):");
  auto raw = http_request(admin_port, "GET", "/analyze?target=events&key=^x");
  CHECK(raw.status == 400);
  CHECK(raw.body.find("percent-encode") != std::string::npos);
  CHECK(http_request(admin_port, "GET", "/analyze?target=events&sample=2").status == 400);

  // santral analyze --write: the proposed config loads, with events placed as advised.
  TempDir dir;
  auto proposal = dir.path() / "proposed.yaml";
  auto cli =
      run_santral({"analyze", "events", "--router", "127.0.0.1:" + std::to_string(santral.port()),
                   "--seconds", "0.5", "--write", proposal.string()});
  INFO(cli.output);
  REQUIRE(cli.exit_code == 0);
  CHECK(cli.output.find("# what-if per strategy") != std::string::npos);
  CHECK(cli.output.find("# recommendation") != std::string::npos);
  REQUIRE(std::filesystem::exists(proposal));
  auto proposed = santral::config::load_config(proposal);
  REQUIRE(proposed.namespaces.size() == 1);
  CHECK(proposed.namespaces[0].strategy != santral::config::Strategy::Range);
  CHECK(proposed.namespaces[0].shard_key == "id");
  writers.stop();
  CHECK(writers.errors() == 0);
}

TEST_CASE("analyze: nothing is sampled outside a window; one window at a time; bad requests") {
  RedisServer a, b, c, d;
  SantralProcess santral(SantralProcess::config_for({&a, &b, &c, &d}, kEvents));
  auto client = santral.client(30000);
  {
    EventWriters writers(santral.port(), 1);
    REQUIRE(wait_until([&] { return writers.batches() > 50; }, 10000));
  }
  // Traffic before the window is not in it, and none came during it.
  auto quiet = analyze_json(client, {"events", "SECONDS", "0.3", "SAMPLE", "1"});
  CHECK(quiet["sampled_all"] == 0);
  CHECK(quiet["stored"].get<long>() > 0);

  // A second analysis while one runs is refused, and says why.
  auto first = std::async(std::launch::async, [&] {
    auto other = santral.client(30000);
    return other.command({"SANTRAL", "ANALYZE", "events", "SECONDS", "2"});
  });
  auto second = santral.client();
  auto sampling = [&] {
    auto info = second.command({"INFO", "santral"}).str;
    return info.find("analysis_sample_rate:0.05") != std::string::npos;
  };
  REQUIRE(wait_until(sampling, 5000));
  auto refused = second.command({"SANTRAL", "ANALYZE", "events", "SECONDS", "0.1"});
  CHECK(refused.is_error());
  CHECK(refused.str.find("already running") != std::string::npos);
  CHECK(first.get().type == Reply::Type::String);
  CHECK(second.command({"INFO", "santral"}).str.find("analysis_sample_rate:0\r\n") !=
        std::string::npos);

  for (const auto& args :
       std::vector<std::vector<std::string>>{{"SANTRAL", "ANALYZE", "events", "SECONDS", "0"},
                                             {"SANTRAL", "ANALYZE", "events", "SAMPLE", "1.5"},
                                             {"SANTRAL", "ANALYZE", "events", "FORMAT", "xml"},
                                             {"SANTRAL", "ANALYZE", "events", "SECONDS"},
                                             {"SANTRAL", "ANALYZE", "events", "BOGUS", "1"}}) {
    auto reply = client.command(args);
    CHECK(reply.is_error());
    CHECK(reply.str.find("use SANTRAL ANALYZE <namespace | key glob>") != std::string::npos);
  }
  auto bad_key = client.command({"SANTRAL", "ANALYZE", "events", "SECONDS", "0.1", "KEY", "(x"});
  CHECK(bad_key.is_error());
  CHECK(bad_key.str.find("neither a field of event:{tenant}:{id} nor a regular expression") !=
        std::string::npos);
  // Santral serves on: the session that got the errors still works.
  CHECK(client.command({"SET", "event:t0:5", "v"}).is_ok());
}

TEST_CASE("analyze: through one router of a fleet, the traffic of the other is covered") {
  EtcdCluster etcd(1);
  RedisServer a, b, c, d;
  SantralProcess first(
      SantralProcess::config_for({&a, &b, &c, &d}, kEvents + etcd.cluster_yaml("analyze")));
  SantralProcess second(etcd.cluster_yaml("analyze"));
  auto asker = first.client(30000);
  REQUIRE(wait_until(
      [&] {
        return asker.command({"SANTRAL", "ROUTERS"}).elements.size() == 2;
      },
      10000));
  // Only the second router has clients.
  EventWriters writers(second.port(), 1);
  REQUIRE(wait_until([&] { return writers.batches() > 20; }, 10000));
  auto report = analyze_json(asker, {"events", "SECONDS", "1", "SAMPLE", "0.5"});
  INFO(report.dump(2));
  CHECK(report["routers"].size() == 2);
  CHECK(report["missing"].empty());
  CHECK(report["sampled"].get<long>() > 50);
  CHECK(report["keys"][0]["monotonic"] == true);
  writers.stop();

  // A router that does not answer (stopped) is named as not covered; the rest is reported.
  second.process().pause();
  auto partial = analyze_json(asker, {"events", "SECONDS", "0.2"});
  second.process().resume();
  INFO(partial.dump(2));
  CHECK(partial["routers"].size() == 1);
  REQUIRE(partial["missing"].size() == 1);
  CHECK(partial["missing"][0].get<std::string>().find("no answer within 10.2 s") !=
        std::string::npos);
  bool warned = false;
  for (const auto& w : partial["warnings"])
    warned = warned || w.get<std::string>().starts_with("not covered: router");
  CHECK(warned);
}
