#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "config/topology.h"
#include "router/resharding/mover.h"
#include "router/resharding/reshard_state.h"

namespace santral::router {

// What a move needs of the server that runs it.
class TopologyHost {
 public:
  virtual ~TopologyHost() = default;
  virtual std::uint64_t next_version() = 0;
  // Hands `topology` to every worker, waits until nothing routed before can still reach a
  // shard (a fence), lets the workers pull under it, then runs `done` (server thread).
  virtual void switch_topology(config::TopologyPtr topology, std::function<void()> done) = 0;
};

// A placement change from the map in force to a new one, on stock Redis (the design):
//  - A reload whose new map gives keys another owner becomes a planned move; the old map keeps
//    serving until it is approved.
//  - Approved, every worker switches to a moving topology, which routes each key to its new
//    owner but first pulls it from its old one (key_pull.h: MIGRATE on the old owner, which
//    moves the key if it is still there); a background walk (mover.h) moves the rest.
//  - A switch of direction (approve, abort) holds pulls until every worker has switched and
//    every request routed the old way is answered, so that no key is written on both sides.
//  - When no source holds a key that moves, the new map is put in force alone: "pull, then run"
//    stays correct for requests still routed the moving way, since nothing is left to pull.
//  - ABORT moves the moved keys back the same way, then the old map is in force again.
// The move is kept on disk (reshard_state.h) and resumes after a restart.
class Resharding {
 public:
  Resharding(boost::asio::io_context& io, TopologyHost& host);
  ~Resharding();

  // Where the move is kept: `state_file`, or beside the config file.
  void set_state_file(const std::filesystem::path& config_path,
                      const std::filesystem::path& state_file);

  // A reload: `next` moves keys away from `current` (the map in force). The old map keeps
  // serving; returns the plan's summary, or an error (a move is already running).
  struct Planned {
    bool ok = true;
    std::string message;
  };
  Planned plan(config::TopologyPtr current, const config::TopologyPtr& next, std::string next_text);
  // The text of the config whose placement is in force (kept on disk with a move).
  void set_in_force_text(std::string text) { in_force_text_ = std::move(text); }
  const std::string& in_force_text() const { return in_force_text_; }
  // A reload whose map moves nothing: a planned move, if any, is dropped.
  void cancel_plan(std::string_view why);

  // At start-up, a move kept on disk: the topology to serve with (nullptr: none kept).
  // `parse` turns a kept config's text into a topology of the given version.
  using ParseTopology = std::function<config::TopologyPtr(const std::string& text)>;
  // `version` is the moving topology's; the destination's is the one after it.
  config::TopologyPtr restore(const ParseTopology& parse, std::uint64_t version);
  bool has_saved_move() const { return std::filesystem::exists(state_file_); }
  // After restore(): the map salted counters are named by, kept from an earlier move (nullptr:
  // the map in force).
  std::shared_ptr<const config::ShardMap> naming() const { return naming_; }
  // Once the server runs: resumes what restore() found (the walk, the plan's sampling).
  void resume();

  // SANTRAL RESHARD APPROVE / ABORT: "" on success, else the client's error.
  std::string approve();
  std::string abort();
  ReshardStatus status() const;
  ReshardState state() const { return status_.state; }
  bool running() const {
    return status_.state != ReshardState::Idle && status_.state != ReshardState::Planned;
  }

 private:
  void sample();
  void start_moving(const config::TopologyPtr& from, const config::TopologyPtr& to,
                    ReshardState state);
  void walk_done();
  void finished();
  void save();
  void log_plan() const;

  boost::asio::io_context& io_;
  TopologyHost& host_;
  std::filesystem::path state_file_;
  ReshardStatus status_;
  config::TopologyPtr from_;    // where the keys were when the move was planned
  config::TopologyPtr to_;      // where they go
  config::TopologyPtr moving_;  // in force while keys move (either direction)
  std::string from_text_, to_text_;
  std::string in_force_text_;
  std::string naming_text_;
  std::shared_ptr<const config::ShardMap>
      naming_;  // the config salted counters are named by; empty: the one in force
  std::unique_ptr<Mover> mover_;
  std::function<void()> stop_sampling_;  // ends the plan's sampling early
  std::uint64_t epoch_ = 0;
  std::uint64_t final_version_ = 0;  // the version the destination map is put in force with
  std::uint64_t generation_ = 0;     // a plan replaced meanwhile drops its sampling's results
  std::chrono::steady_clock::time_point started_;
  std::uint64_t keys_before_ = 0;  // moved by earlier walks of this move (before a restart)
  bool resume_walk_ = false;
};

}  // namespace santral::router
