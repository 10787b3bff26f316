#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace santral::router {

// Whether the primary Sentinel promoted for a shard has the writes of the one it replaces.
// Redis numbers a primary's writes by a replication id and an offset (INFO replication):
//
//   old primary   master_replid:A   master_repl_offset:1200      (as Santral last read it)
//   promoted      master_replid:B   master_replid2:A   second_repl_offset:1201
//                 (a replica that synced from A keeps A's history up to second_repl_offset-1
//                 when it is promoted, and starts its own, B, from there)
//
// It descends when it carries on A itself (master_replid:A) or took A's history over at or
// past the offset Santral last read on A. A replica that never synced has a history of its
// own instead: everything acknowledged on A is missing from it.

// What a server's INFO replication says of its replication history.
struct ReplicationHistory {
  std::string role;                 // "master" or "slave"
  std::string replid;               // master_replid: the history it writes (or follows)
  std::int64_t offset = -1;         // master_repl_offset: how far that history goes
  std::string replid2;              // master_replid2: the one it took over ("000…": none)
  std::int64_t second_offset = -1;  // second_repl_offset: first byte not from replid2 (-1: none)
  bool readable() const { return !replid.empty() && offset >= 0; }
};
ReplicationHistory read_replication_history(std::string_view info);
// What INFO persistence says of the writes a server took, as a mark that moves with every
// write and not with Redis's own PINGs to its replicas: its count of changes since its last
// save and that save's time (rdb_changes_since_last_save, rdb_last_save_time). Empty when
// absent.
std::string changes_mark(std::string_view info);

// A primary as Santral last read it while it served (replid empty: never read; `error` says
// why not, or why the latest reading failed).
struct PrimaryReading {
  std::string replid;
  std::int64_t offset = -1;
  std::string error;
};

enum class Lineage {
  Descends,      // it has every write Santral last read on the old primary
  NeverSynced,   // it held no replication history when promoted: none of the old one's writes
  OtherHistory,  // its history is not the old primary's (synced elsewhere, or Santral missed one)
  Behind,        // it took the old history over short of the offset Santral last read there
  Unverified,    // Santral cannot tell: no reading of the old primary, or none of the new one
};
// "descends", "never_synced", "other_history", "behind", "unverified" (INFO, SHARDMAP, JSON).
std::string_view lineage_name(Lineage lineage);

struct LineageVerdict {
  Lineage lineage = Lineage::Unverified;
  std::int64_t read_offset = -1;    // the old primary's master_repl_offset as last read
  std::int64_t missing_bytes = -1;  // Behind: how much of it the new primary lacks
  // A clause for the log and the client's error, naming the old primary: "it never synced
  // with 127.0.0.1:7001 (...)".
  std::string why;
  bool loses_writes() const { return lineage != Lineage::Descends; }
};

// Judges the new primary (its INFO replication text, or `new_info_error` when it could not be
// read) against the old primary at `old_address` as Santral last read it.
LineageVerdict judge_lineage(const PrimaryReading& old, std::string_view old_address,
                             std::string_view new_info, std::string_view new_info_error);

// The last reading of each primary while it served, by address: taken by the first worker
// every 100 ms and kept when the primary took a write since the last one kept
// (router/backend/replica_watch.h), read when a failover is followed
// (router/process/sentinel_failover.h). A failed reading keeps the last good one.
class PrimaryReadings {
 public:
  void read(const std::string& address, std::string replid, std::int64_t offset);
  void unread(const std::string& address, std::string why);
  // Starts `address` over: a server just promoted is read anew, not as it was before.
  void forget(const std::string& address);
  PrimaryReading last(const std::string& address) const;

 private:
  mutable std::mutex lock_;
  std::map<std::string, PrimaryReading> readings_;
};

}  // namespace santral::router
