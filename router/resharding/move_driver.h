#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "placement/topology.h"
#include "router/resharding/move_ledger.h"
#include "router/resharding/mover.h"
#include "router/status/reshard_state.h"

namespace santral::router {

// What a move needs of the server that runs it.
class MoveHost {
 public:
  virtual ~MoveHost() = default;
  virtual std::uint64_t next_version() = 0;
  // The topology this router serves now.
  virtual const placement::TopologyPtr& serving() const = 0;
  // Hands `topology` to every worker, waits until nothing routed before can still reach a
  // shard (a fence; pulls are held meanwhile), then runs `done` on the server's thread.
  virtual void switch_topology(placement::TopologyPtr topology, std::function<void()> done) = 0;
  // Lets the pulls the workers hold run.
  virtual void release_pulls() = 0;
  // What every MIGRATE of this process passes (the walk's too).
  virtual MigrationGate& migrations() = 0;
  // The topology of a map's text as the ledger keeps it (a config file's, or a fleet map's
  // shared part) with this router's own settings; nullptr with `error`.
  virtual std::shared_ptr<placement::Topology> topology_of(const std::string& text,
                                                           std::string& error) = 0;
};

// Moves keys from the map in force to a new one, on stock Redis, for a single router and for
// a fleet alike: one state machine, whose state lives in a ledger (move_ledger.h).
//
//   a map that moves keys ──► ledger: planned ──APPROVE──► moving, epoch e1
//   every router: switches to the epoch's moving topology (the new owners, each key pulled
//                 from its old one first: key_pull.h), holds its pulls, waits out what it
//                 sent the old way, acknowledges e1
//   coordinator: every router acknowledged ──► ledger: released e1
//   every router: its pulls run; coordinator: walks the sources (mover.h)
//   coordinator: walk done ──► ledger: the destination is the map in force, no move
//   every router: the map in force alone ("pull, then run" still holds: nothing is left)
//   ABORT while moving ──► aborting, epoch e2: the same the other way round, back to the origin
//
// A single router is a fleet of one: its ledger is its state file, it acknowledges and
// releases its own epochs, and it is always the coordinator. Epochs are unique for the life
// of the cluster, so nothing of one switch is taken for another's. The walk of an epoch stops
// as soon as a later epoch is seen, before this router acknowledges it.
class MoveDriver {
 public:
  using Done = std::function<void(std::string error)>;

  // `who` names this router in what it proposes ("santral" alone; its name in a fleet).
  MoveDriver(boost::asio::io_context& io, MoveHost& host, MoveLedger& ledger, std::string who);
  ~MoveDriver();

  // A reload or a map push whose map gives keys new owners: a planned move from the map in
  // force (approved at once with resharding.auto_approve). `done` gets "" or the error, and
  // the message for the operator.
  void plan(const placement::TopologyPtr& to, std::string to_text,
            std::function<void(bool ok, std::string message)> done);
  void approve(Done done);
  void abort(Done done);

  // The ledger's record changed (nullopt: there is no move any more).
  void take(const std::optional<LedgerMove>& move);
  // The fleet went on past the move this router carries out (a later one starts from a map
  // this router has not taken yet): its walk stops and its record goes; the topology in force
  // stays until the server puts that map in force.
  void set_aside();
  // This router became (or stopped being) the one that drives the move.
  void coordinate(bool mine);
  // Something the coordinator waits for may have happened (routers acknowledged); also
  // called every second, to try again a ledger write that failed.
  void advance();

  ReshardStatus status() const;
  ReshardState state() const;
  bool planned() const { return state() == ReshardState::Planned; }
  // Moving, aborting or finishing.
  bool under_way() const {
    auto s = state();
    return s != ReshardState::Idle && s != ReshardState::Planned;
  }

 private:
  struct Move;
  void start(const LedgerMove& record);
  void switch_to(std::uint64_t epoch);
  void watch_switch(std::int64_t id, std::uint64_t epoch);
  void switched(std::int64_t id, std::uint64_t epoch);
  void take_release();
  void walked(std::uint64_t epoch);
  void ended();

  boost::asio::io_context& io_;
  MoveHost& host_;
  MoveLedger& ledger_;
  std::string who_;
  std::unique_ptr<Move> move_;  // as the ledger last said, and as this router carries it out
  bool coordinating_ = false;   // what the ledger last said
  ReshardStatus last_;          // how the last move ended, for STATUS once idle
  boost::asio::steady_timer switch_watch_;  // a switch that waits says so (watch_switch)
};

}  // namespace santral::router
