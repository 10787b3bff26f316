#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/topology.h"
#include "protocol/learned_commands.h"
#include "router/backend/connection_pool.h"
#include "router/metrics/stats.h"
#include "router/runtime/plan.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

class RequestContext;
class RequestSampler;
class HotKeyDetector;
class NearCache;
class TrackingConnections;
class TrackingLanes;
class SaltTable;
class ScriptCache;
class InputPool;

// What one worker offers the requests of its clients: its thread's io_context, the topology
// it routes by, its connections to the shards, its caches, salts and counters, and the other
// workers. Implemented by Worker (router/process/); routes, commands and the dispatcher see
// only this. Every call is made on the worker's own thread unless it says otherwise.
class WorkerServices {
 public:
  virtual ~WorkerServices() = default;

  virtual unsigned index() const = 0;
  virtual boost::asio::io_context& io() = 0;
  virtual const config::Topology& topology() const = 0;
  virtual const config::TopologyPtr& topology_ptr() const = 0;
  const config::Config& config() const { return *topology().config; }
  const config::ShardMap& shard_map() const { return *topology().map; }
  virtual SharedState& shared() = 0;
  virtual ConnectionPool& pool() = 0;
  virtual WorkerStats& stats() = 0;
  // Read buffers and parse state, lent to the sessions that have something to read.
  virtual InputPool& inputs() = 0;
  // A session's buffered, unparsed input went from `before` to `after` bytes; past this
  // worker's share of limits.max_input_bytes_total the client holding the most stops being read.
  virtual void input_changed(std::size_t before, std::size_t after) = 0;
  virtual ScriptCache& scripts() = 0;
  // Hot-key sampling (router/hotkeys/detection/hot_key_detector.h).
  virtual HotKeyDetector& hotkeys() = 0;
  // SANTRAL ANALYZE: the requests this worker sampled (router/plan/request_sampler.h).
  virtual RequestSampler& sampler() = 0;
  // Which keys are salted counters here: the config's rules with SANTRAL SALT/UNSALT applied.
  virtual SaltTable& salts() = 0;
  // Hot reads answered here (near_cache:), and the RESP3 connections that keep them coherent.
  virtual NearCache& near_cache() = 0;
  virtual TrackingConnections& near_cache_connections() = 0;
  // Client-side caching: the tracking clients' lanes to the shards (router/tracking/).
  virtual TrackingLanes& lanes() = 0;
  // The commands learned from the shards and `commands:` (router/catalog/).
  virtual const protocol::LearnedCommands& learned() const = 0;
  // Takes the run-time salting changes of SharedState.
  virtual void refresh_salts() = 0;
  // Remembers a script body here and tells the other workers about it.
  virtual void remember_script(std::string_view body) = 0;
  // SCRIPT FLUSH: this worker and its peers forget every script they have seen.
  virtual void forget_scripts() = 0;

  // --- moves ---
  // While a move changes direction (starts, is aborted) no worker may pull a key before every
  // worker has switched: pulls wait here until the server releases them.
  virtual bool holding_moves() const = 0;
  virtual void hold_pull(RequestContext& client, std::uint64_t slot,
                         std::vector<PullGroup> groups) = 0;
  // Counts switches of direction: a pull sent before one is not carried on after it.
  virtual std::uint64_t direction() const = 0;
  // Runs `then` at once, or, while pulls are held, when they are released (a fold's step).
  virtual void after_moves_released(std::function<void()> then) = 0;

  // --- the other workers and the clients ---
  // Every worker of the server, this one included.
  virtual const std::vector<WorkerServices*>& peers() const = 0;
  // Totals this worker republishes on every tick, readable from any thread.
  virtual const WorkerTotals& published() const = 0;
  // Calls `visit` for each client of this worker.
  virtual void for_each_client(const std::function<void(RequestContext&)>& visit) = 0;
  virtual std::size_t client_count() const = 0;
  // Called by a closing client: the worker forgets it.
  virtual void forget(RequestContext& client) = 0;
  // CLIENT TRACKING ... REDIRECT: `keys` of an invalidation for client `from` (of this worker)
  // go to client `to` on worker `to_worker`; `from` is told if `to` is gone.
  virtual void redirect_invalidation(std::uint64_t from, std::uint64_t to, unsigned to_worker,
                                     std::string keys) = 0;
};

}  // namespace santral::router
