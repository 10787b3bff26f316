#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "router/cluster/move_document.h"

namespace santral::router {

// A move as its ledger last recorded it: the document, which move it is (`id`, unique for the
// life of the cluster) and the revision of this record (a later record has a higher one).
struct LedgerMove {
  MoveDocument document;
  std::int64_t id = 0;
  std::int64_t revision = 0;
};

// Where a move is recorded, and what every router taking part in it must agree on: the one
// place a move's state lives. A single router's ledger is its state file (local_ledger.h), a
// fleet's is etcd (fleet_ledger.h); the move driver (move_driver.h) is the same for both.
//
// Writes are asynchronous: `done` gets "" or the client's error, on the driver's thread. A
// write that took effect comes back to the driver as a new record (MoveDriver::take), before
// or after `done`.
class MoveLedger {
 public:
  using Done = std::function<void(std::string error)>;
  virtual ~MoveLedger() = default;

  // A map that moves keys: records the move from the map in force (`document.from_text`),
  // planned or, approved at once, moving. A planned move is replaced; one under way refuses.
  virtual void propose(MoveDocument document, Done done) = 0;
  // APPROVE (planned -> moving) and ABORT (planned -> none, moving -> aborting). Each switch
  // of direction gets an epoch no earlier one had, in this or any move.
  virtual void approve(Done done) = 0;
  virtual void abort(Done done) = 0;

  // This router has switched to `epoch` of move `id` and waited out what it sent before.
  virtual void acknowledge(std::int64_t id, std::uint64_t epoch) = 0;
  // Every router taking part has (a single router: itself).
  virtual bool all_acknowledged(std::int64_t id, std::uint64_t epoch) const = 0;
  // The coordinator's writes: `epoch`'s pulls may run; the walk is done, the move ends (the
  // destination, or after an abort the origin, is the map in force; the record is gone).
  virtual void release(const LedgerMove& move, Done done) = 0;
  virtual void finish(const LedgerMove& move, Done done) = 0;
  // How many keys the coordinator's walk has moved, for every router's STATUS.
  virtual void report_walk(std::uint64_t keys_moved) = 0;
  virtual std::uint64_t walk_reported(std::int64_t id) const = 0;
  // The text of the map in force, as the ledger has it (after a move ends: where the keys are).
  virtual std::string in_force_text() const = 0;
};

}  // namespace santral::router
