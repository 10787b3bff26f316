// Which replicas may serve reads (router/backend/replica_freshness.h): INFO replication as
// Redis 7.0 writes it, and the verdicts drawn from it.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "router/backend/replica_freshness.h"

using namespace santral::router;
using namespace std::chrono_literals;
using Verdict = ReplicaFreshness::Verdict;

namespace {

std::string replica_info(const std::string& link, int syncing, long long offset,
                         long long down_since = -2) {
  std::string info =
      "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:7000\r\n"
      "master_link_status:" +
      link +
      "\r\nmaster_last_io_seconds_ago:1\r\nmaster_sync_in_progress:" + std::to_string(syncing) +
      "\r\nslave_read_repl_offset:" + std::to_string(offset) +
      "\r\nslave_repl_offset:" + std::to_string(offset) + "\r\n";
  if (down_since != -2)
    info += "master_link_down_since_seconds:" + std::to_string(down_since) + "\r\n";
  return info + "slave_priority:100\r\nmaster_repl_offset:" + std::to_string(offset) + "\r\n";
}

}  // namespace

TEST_CASE("INFO replication of a replica and of a primary is read field by field") {
  auto reading = read_replica_info(replica_info("up", 0, 1234));
  CHECK(reading.is_replica);
  CHECK(reading.link_up);
  CHECK_FALSE(reading.syncing);
  CHECK(reading.offset == 1234);  // slave_repl_offset, not slave_read_repl_offset's prefix
  CHECK(reading.down_since_s == -1);
  auto down = read_replica_info(replica_info("down", 1, 0, 7));
  CHECK_FALSE(down.link_up);
  CHECK(down.syncing);
  CHECK(down.down_since_s == 7);
  CHECK(read_primary_offset("# Replication\r\nrole:master\r\nconnected_slaves:1\r\n"
                            "master_repl_offset:98765\r\nsecond_repl_offset:-1\r\n") == 98765);
  CHECK(read_primary_offset("# Replication\r\nrole:master\r\n") == -1);
  CHECK_FALSE(read_replica_info("# Replication\r\nrole:master\r\n").is_replica);
}

TEST_CASE("a replica's lag is the age of the oldest write it lacks") {
  OffsetHistory primary;
  auto t0 = OffsetHistory::Clock::now();
  primary.add(t0, 100);
  primary.add(t0 + 100ms, 100);  // no write: the first sample of an offset counts
  primary.add(t0 + 200ms, 150);
  primary.add(t0 + 300ms, 400);
  CHECK(primary.behind(400, t0 + 1000ms) == 0ms);
  CHECK(primary.behind(100, t0 + 1000ms) == 800ms);  // lacks what 150 added, seen at 200 ms
  CHECK(primary.behind(150, t0 + 1000ms) == 700ms);
  CHECK(primary.behind(500, t0 + 1000ms) == 0ms);  // ahead of the samples (a later answer)
}

TEST_CASE("a replica serves reads only while it is in sync") {
  OffsetHistory primary;
  auto t0 = OffsetHistory::Clock::now();
  primary.add(t0, 1000);
  primary.add(t0 + 50ms, 2000);
  auto now = t0 + 650ms;
  SECTION("syncing, or never in sync since it started: never, whatever the bound") {
    for (auto bound : {0ms, 100000ms}) {
      CHECK(judge_replica(read_replica_info(replica_info("down", 1, 0, 3)), primary, now, bound)
                .verdict == Verdict::Stale);
      CHECK(judge_replica(read_replica_info(replica_info("down", 0, 0, -1)), primary, now, bound)
                .verdict == Verdict::Stale);
    }
  }
  SECTION("behind by more than max_lag_ms: not with that bound, yes without one") {
    auto reading = read_replica_info(replica_info("up", 0, 1000));
    auto judged = judge_replica(reading, primary, now, 500ms);
    CHECK(judged.verdict == Verdict::Stale);
    CHECK(judged.lag_ms == 600);
    CHECK(judged.why.find("600 ms ago") != std::string::npos);
    CHECK(judge_replica(reading, primary, now, 1000ms).verdict == Verdict::Fresh);
    CHECK(judge_replica(reading, primary, now, 0ms).verdict == Verdict::Fresh);
    CHECK(
        judge_replica(read_replica_info(replica_info("up", 0, 2000)), primary, now, 500ms).lag_ms ==
        0);
  }
  SECTION("its primary gone: as long as the bound allows since the link went down") {
    auto reading = read_replica_info(replica_info("down", 0, 2000, 4));
    CHECK(judge_replica(reading, primary, now, 0ms).verdict == Verdict::Fresh);
    CHECK(judge_replica(reading, primary, now, 5000ms).verdict == Verdict::Fresh);
    auto judged = judge_replica(reading, primary, now, 3000ms);
    CHECK(judged.verdict == Verdict::Stale);
    CHECK(judged.why.find("down for 4 s") != std::string::npos);
  }
  SECTION("a replica promoted to primary is no replica") {
    CHECK(judge_replica(read_replica_info("# Replication\r\nrole:master\r\n"), primary, now, 0ms)
              .verdict == Verdict::Stale);
  }
}

TEST_CASE("an unmeasured replica serves reads only while no lag bound is set") {
  ReplicaFreshness freshness;
  auto state = freshness.state("127.0.0.1:7100");
  CHECK(state->fresh(false));
  CHECK_FALSE(state->fresh(true));
  state->set(Verdict::Fresh, 3, "in sync");
  CHECK(state->fresh(true));
  CHECK(freshness.state("127.0.0.1:7100") == state);  // one state per address
  state->set(Verdict::Stale, -1, "syncing");
  CHECK_FALSE(state->fresh(false));
  CHECK(state->why() == "syncing");
}
