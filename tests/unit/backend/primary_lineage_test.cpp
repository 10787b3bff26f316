// Whether a promoted primary descends from the one it replaces (router/backend/primary_lineage.h):
// INFO replication as Redis 7.0.15 writes it for a primary, a replica promoted after it synced,
// and a replica promoted before it ever synced (shapes copied from real servers).
#include <catch2/catch.hpp>

#include <string>

#include "router/backend/primary_lineage.h"

using namespace santral::router;

namespace {

const std::string kOld = "127.0.0.1:7001";
const std::string kOldId = "cd3fb7c4158e38779f920c580bda444555c54957";
const std::string kZeros = "0000000000000000000000000000000000000000";

std::string info(const std::string& role, const std::string& replid, long long offset,
                 const std::string& replid2, long long second_offset) {
  return "# Replication\r\nrole:" + role + "\r\nconnected_slaves:0\r\nmaster_failover_state:" +
         "no-failover\r\nmaster_replid:" + replid + "\r\nmaster_replid2:" + replid2 +
         "\r\nmaster_repl_offset:" + std::to_string(offset) +
         "\r\nsecond_repl_offset:" + std::to_string(second_offset) +
         "\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\n"
         "repl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n";
}

// The old primary as last read: its own history, `offset` bytes into it.
PrimaryReading read_at(long long offset) {
  return {kOldId, offset, ""};
}

}  // namespace

TEST_CASE("INFO replication is read into the history a server writes and the one it took over") {
  auto promoted = read_replication_history(
      info("master", "b0bd5465ff1b3da30baf39d7b2da7ab7ac3ff3ac", 1300, kOldId, 1201));
  CHECK(promoted.role == "master");
  CHECK(promoted.replid == "b0bd5465ff1b3da30baf39d7b2da7ab7ac3ff3ac");
  CHECK(promoted.offset == 1300);
  CHECK(promoted.replid2 == kOldId);
  CHECK(promoted.second_offset == 1201);
  CHECK(promoted.readable());
  CHECK_FALSE(read_replication_history("# Replication\r\nrole:master\r\n").readable());
}

TEST_CASE("a replica that synced and then was promoted descends from the old primary") {
  // It had all 1200 bytes when promoted: second_repl_offset is the first byte it did not.
  auto verdict =
      judge_lineage(read_at(1200), kOld, info("master", "new-id", 1250, kOldId, 1201), "");
  CHECK(verdict.lineage == Lineage::Descends);
  CHECK_FALSE(verdict.loses_writes());
  CHECK(verdict.read_offset == 1200);
  // It took over further than Santral last read (writes after the reading reached it too).
  CHECK(judge_lineage(read_at(1200), kOld, info("master", "new-id", 1400, kOldId, 1301), "")
            .lineage == Lineage::Descends);
  // The same server under another address, or a primary that was never replaced: it carries
  // on the old history itself.
  CHECK(judge_lineage(read_at(1200), kOld, info("master", kOldId, 1200, kZeros, -1), "").lineage ==
        Lineage::Descends);
}

TEST_CASE("a replica promoted before it ever synced has none of the old primary's writes") {
  // A replica started empty whose first sync never finished: promoted at offset 0, its
  // replid2 is the id it made up when it started, not the old primary's.
  auto verdict = judge_lineage(read_at(1200), kOld,
                               info("master", "9b93ec0d5e6a26bcb6d248888f6959dd632f432c", 0,
                                    "cf21ed1411a4da896d6ea6ae4d83de7df6b31279", 1),
                               "");
  CHECK(verdict.lineage == Lineage::NeverSynced);
  CHECK(verdict.loses_writes());
  CHECK(lineage_name(verdict.lineage) == "never_synced");
  INFO(verdict.why);
  CHECK(verdict.why.find("it never synced with 127.0.0.1:7001") == 0);
  CHECK(verdict.why.find("offset 1200") != std::string::npos);
  // A server that never was a replica at all (no replid2) is the same case, even when the old
  // primary had written nothing a replica could see (offset 0: no backlog yet).
  CHECK(judge_lineage(read_at(0), kOld, info("master", "fresh", 0, kZeros, -1), "").lineage ==
        Lineage::NeverSynced);
}

TEST_CASE("a replica promoted short of the offset Santral last read lacks the writes between") {
  auto verdict =
      judge_lineage(read_at(1200), kOld, info("master", "new-id", 1000, kOldId, 1001), "");
  CHECK(verdict.lineage == Lineage::Behind);
  CHECK(verdict.missing_bytes == 200);
  INFO(verdict.why);
  CHECK(verdict.why.find("only up to offset 1000, 200 bytes short of offset 1200") !=
        std::string::npos);
  // Off by one: second_repl_offset 1200 means it has 1199 bytes, one short.
  CHECK(judge_lineage(read_at(1200), kOld, info("master", "new-id", 1199, kOldId, 1200), "")
            .missing_bytes == 1);
}

TEST_CASE("a new primary whose history comes from elsewhere does not descend") {
  // It synced from some other primary (one Santral never followed): a history of its own
  // before its promotion, not the old primary's.
  auto verdict = judge_lineage(read_at(1200), kOld,
                               info("master", "new-id", 5000, "some-other-primary", 4001), "");
  CHECK(verdict.lineage == Lineage::OtherHistory);
  CHECK(verdict.loses_writes());
  INFO(verdict.why);
  CHECK(verdict.why.find("is not 127.0.0.1:7001's") != std::string::npos);
}

TEST_CASE("without a reading of either primary the lineage is unverified, which is not trusted") {
  auto never_read =
      judge_lineage(PrimaryReading{"", -1, "NOPERM this user has no permissions to run 'info'"},
                    kOld, info("master", "new-id", 1250, kOldId, 1201), "");
  CHECK(never_read.lineage == Lineage::Unverified);
  CHECK(never_read.loses_writes());
  CHECK(never_read.read_offset == -1);
  INFO(never_read.why);
  CHECK(never_read.why.find("NOPERM") != std::string::npos);

  auto unreadable = judge_lineage(read_at(1200), kOld, "", "127.0.0.1:7101 did not answer");
  CHECK(unreadable.lineage == Lineage::Unverified);
  CHECK(unreadable.why.find("did not answer") != std::string::npos);
  // A server that is no primary (yet) tells nothing about the history it will write.
  CHECK(judge_lineage(read_at(1200), kOld, info("slave", kOldId, 1200, kZeros, -1), "").lineage ==
        Lineage::Unverified);
}

TEST_CASE("a failed reading keeps the last good one; a promoted server is read anew") {
  PrimaryReadings readings;
  CHECK(readings.last(kOld).replid.empty());
  readings.read(kOld, kOldId, 1200);
  readings.unread(kOld, "connection refused");  // the old primary dying
  auto last = readings.last(kOld);
  CHECK(last.replid == kOldId);
  CHECK(last.offset == 1200);
  CHECK(last.error == "connection refused");
  readings.read(kOld, kOldId, 1300);
  CHECK(readings.last(kOld).error.empty());
  readings.forget(kOld);
  CHECK(readings.last(kOld).replid.empty());
}

TEST_CASE("INFO persistence gives a mark that moves with writes, not with time") {
  const std::string before =
      "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:41\r\nrdb_bgsave_in_progress:0\r\n"
      "rdb_last_save_time:1765000000\r\n";
  const std::string after_a_write =
      "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:42\r\nrdb_bgsave_in_progress:0\r\n"
      "rdb_last_save_time:1765000000\r\n";
  // A save resets the count; the save's time still tells the two apart.
  const std::string after_a_save =
      "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:41\r\nrdb_bgsave_in_progress:0\r\n"
      "rdb_last_save_time:1765000009\r\n";
  CHECK(changes_mark(before) == changes_mark(before));
  CHECK(changes_mark(before) != changes_mark(after_a_write));
  CHECK(changes_mark(before) != changes_mark(after_a_save));
  CHECK(changes_mark("# Persistence\r\nloading:0\r\n").empty());
}
