// A request that must wait (for its client's earlier replies, for its user's next token) keeps
// what it was made into and resumes: it is parsed once, and planned once. Counted by INFO's
// total_requests_parsed against total_commands_processed, both published by every worker on
// its tick: a request parsed again would count twice in the first.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "tests/support/cluster.h"
#include "tests/support/process.h"

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

std::uint64_t info_field(const std::string& info, const std::string& key) {
  auto at = info.find("\r\n" + key + ":");
  if (at == std::string::npos) return 0;
  return std::stoull(info.substr(at + key.size() + 3));
}

struct Counts {
  std::uint64_t parsed = 0;
  std::uint64_t processed = 0;
};

// INFO's counts once every worker has published at least `processed` commands (a tick is
// 100 ms or so). Every request is counted as parsed before it is counted as processed, on the
// same thread as the tick: a snapshot with nothing waiting has the two equal unless a request
// was parsed more than once.
Counts counts_once(RedisClient& client, std::uint64_t processed) {
  Counts counts;
  bool reached = wait_until(
      [&] {
        auto info = client.command({"INFO", "santral"}).str;
        counts = {info_field(info, "total_requests_parsed"),
                  info_field(info, "total_commands_processed")};
        return counts.processed >= processed;
      },
      10000);
  INFO("parsed " << counts.parsed << ", processed " << counts.processed);
  REQUIRE(reached);
  return counts;
}

}  // namespace

TEST_CASE("a request that waits for earlier replies or for a token is parsed once") {
  Cluster cluster(2, kUsers, {"--workers", "2"});
  auto ops = cluster.client_as("ops", "ops-pw");
  auto patient = cluster.client_as("patient", "patient-pw");
  auto before = counts_once(ops, 0);
  REQUIRE(before.parsed == before.processed);
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

  // The AUTH before and every INFO the wait sent are counted too: at least `sent` more.
  auto after = counts_once(ops, before.processed + sent);
  CHECK(after.parsed - before.parsed == after.processed - before.processed);
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
