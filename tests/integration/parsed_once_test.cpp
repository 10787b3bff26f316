// A request that must wait (for its client's earlier replies, for its user's next token) keeps
// what it was made into and resumes: it is parsed once, and planned once. Counted by /stats,
// which each worker answers on its own thread: requests_parsed, and the calls of every command
// (counted when a request runs); a request parsed again would count twice in the first.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"

using namespace santral::test;

namespace {

const std::string kUsers =
    "users:\n"
    "  - name: ops\n"
    "    password: ops-pw\n"
    "  - name: patient\n"
    "    password: patient-pw\n"
    "    limits: {requests_per_s: 50, burst: 1, wait_ms: 5000}\n"
    "  - name: nowait\n"
    "    password: nowait-pw\n"
    "    rules: \"on >nowait-pw +@all -wait ~*\"\n";

struct Counts {
  std::uint64_t parsed = 0;
  std::uint64_t run = 0;  // every command's calls
};

// What every worker has parsed and run so far, each asked on its own thread (not a published
// total that may be a tick old).
Counts counts(int admin_port) {
  auto total = nlohmann::json::parse(http_request(admin_port, "GET", "/stats").body)["total"];
  Counts counts{total["requests_parsed"].get<std::uint64_t>(), 0};
  for (const auto& [name, command] : total["commands"].items())
    counts.run += command["calls"].get<std::uint64_t>();
  return counts;
}

}  // namespace

TEST_CASE("a request that waits for earlier replies or for a token is parsed once") {
  int admin_port = free_loopback_port();
  Cluster cluster(2, kUsers + "admin: {listen: 127.0.0.1:" + std::to_string(admin_port) + "}\n",
                  {"--workers", "2"});
  auto ops = cluster.client_as("ops", "ops-pw");
  auto patient = cluster.client_as("patient", "patient-pw");
  auto before = counts(admin_port);
  std::uint64_t sent = 0;

  // WAIT waits until the SETs before it are answered, which cannot happen before it is read:
  // they are in the same write.
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 5; ++i) ops.append({"SET", "k" + std::to_string(i), "v"});
    ops.append({"WAIT", "0", "0"});
    ops.append({"GET", "k0"});
    for (int i = 0; i < 7; ++i) REQUIRE_FALSE(ops.get_reply().is_error());
    sent += 7;
  }
  // Twenty INCRs in one write with one token: nineteen are held for theirs, and resume.
  for (int i = 0; i < 20; ++i) patient.append({"INCR", "patient:n"});
  for (int i = 1; i <= 20; ++i) CHECK(patient.get_reply().integer == i);
  sent += 20;

  // Every request was answered: each was parsed once and ran once.
  auto after = counts(admin_port);
  CHECK(after.run - before.run == sent);
  CHECK(after.parsed - before.parsed == sent);
}

TEST_CASE("a denied command that waits for earlier replies is logged once") {
  Cluster cluster(1, kUsers);
  auto ops = cluster.client_as("ops", "ops-pw");
  auto nowait = cluster.client_as("nowait", "nowait-pw");
  REQUIRE(ops.command({"ACL", "LOG", "RESET"}).is_ok());

  // The SET is not answered when WAIT is read: WAIT waits for it, then is refused.
  nowait.append({"SET", "k", "v"});
  nowait.append({"WAIT", "0", "0"});
  CHECK(nowait.get_reply().is_ok());
  auto denied = nowait.get_reply();
  INFO(denied.str);
  CHECK(denied.str.starts_with("NOPERM"));

  auto log = ops.command({"ACL", "LOG"});
  REQUIRE(log.elements.size() == 1);
  REQUIRE(log.elements[0].elements.size() >= 2);
  CHECK(log.elements[0].elements[0].str == "count");
  CHECK(log.elements[0].elements[1].integer == 1);
}
