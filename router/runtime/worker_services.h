#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "protocol/learned_commands.h"
#include "router/backend/connection_pool.h"
#include "router/metrics/stats.h"
#include "router/runtime/plan.h"
#include "router/runtime/shared_state.h"
#include "router/runtime/write_refusals.h"

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
class MigrationGate;
class SlowLog;
class TenantLimiter;

// What one worker offers the requests of its clients: its thread's io_context, the topology
// it routes by, its connections to the shards, its caches, salts and counters, and the other
// workers. Implemented by Worker (router/process/); routes, commands and the dispatcher see
// only this. Every call is made on the worker's own thread unless it says otherwise.
class WorkerServices {
 public:
  virtual ~WorkerServices() = default;

  // The services every request reads are plain pointers the worker provides once (below),
  // not virtual calls: a GET reads several of them.
  unsigned index() const { return s_.index; }
  boost::asio::io_context& io() { return *s_.io; }
  const placement::Topology& topology() const { return **s_.topology; }
  const placement::TopologyPtr& topology_ptr() const { return *s_.topology; }
  const config::Config& config() const { return *topology().config; }
  const placement::ShardMap& shard_map() const { return *topology().map; }
  SharedState& shared() { return *s_.shared; }
  virtual ConnectionPool& pool() = 0;
  WorkerStats& stats() { return *s_.stats; }
  // Read buffers and parse state, lent to the sessions that have something to read.
  virtual InputPool& inputs() = 0;
  // A client's buffered, unparsed input went from `before` to `after` bytes; past this
  // worker's share of limits.max_input_bytes_total the client holding the most stops being read.
  virtual void input_changed(std::size_t before, std::size_t after) = 0;
  ScriptCache& scripts() { return *s_.scripts; }
  // Hot-key sampling (router/hotkeys/detection/hot_key_detector.h).
  HotKeyDetector& hotkeys() { return *s_.hotkeys; }
  // SANTRAL ANALYZE: the requests this worker sampled (router/plan/request_sampler.h).
  RequestSampler& sampler() { return *s_.sampler; }
  // Which keys are salted counters here: the config's rules with SANTRAL SALT/UNSALT applied.
  SaltTable& salts() { return *s_.salts; }
  // Hot reads answered here (near_cache:), and the RESP3 connections that keep them coherent.
  NearCache& near_cache() { return *s_.near_cache; }
  // SLOWLOG: this worker's slow requests (router/runtime/slow_log.h).
  SlowLog& slow_log() { return *s_.slow_log; }
  // namespaces[].limits: by the index of the namespace in the map in force, its limiter
  // (nullptr: none); empty when no namespace has limits, which is all a request then costs.
  std::span<TenantLimiter* const> namespace_limiters() const {
    if (s_.namespace_limiters == nullptr) return {};
    return *s_.namespace_limiters;
  }
  virtual TrackingConnections& near_cache_connections() = 0;
  // Client-side caching: the tracking clients' lanes to the shards (router/tracking/).
  virtual TrackingLanes& lanes() = 0;
  // The commands learned from the shards and `commands:` (router/catalog/).
  const protocol::LearnedCommands& learned() const { return **s_.learned; }
  // The same, held: the commands it names stay where they are while the holder keeps it.
  std::shared_ptr<const protocol::LearnedCommands> learned_now() const { return *s_.learned; }
  // The shards whose writes are refused after a failover that lost writes; nullptr: none.
  const WriteRefusals* write_refusals() const {
    return s_.refusals == nullptr || !*s_.refusals || (*s_.refusals)->shards.empty()
               ? nullptr
               : s_.refusals->get();
  }
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
  // Every MIGRATE of this process (pulls on every worker, the walk) waits here while it would
  // make a cycle (router/resharding/migration_gate.h); one gate, shared with the server.
  MigrationGate& migrations() { return *s_.migrations; }

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
  // Pushes `frame` to client `client` of this worker, in order with its replies; nothing when
  // it is gone (MONITOR's lines, router/routes/monitor_feed.h).
  virtual void push_to(std::uint64_t client, const std::string& frame) = 0;

 protected:
  // What the implementation provides once, at construction; it owns every one of them and
  // they live as long as it does (a topology or catalog replaced whole is read through its
  // pointer). A fake may leave out what its tests do not use.
  struct Services {
    unsigned index = 0;
    boost::asio::io_context* io = nullptr;
    const placement::TopologyPtr* topology = nullptr;
    SharedState* shared = nullptr;
    WorkerStats* stats = nullptr;
    ScriptCache* scripts = nullptr;
    HotKeyDetector* hotkeys = nullptr;
    RequestSampler* sampler = nullptr;
    SaltTable* salts = nullptr;
    NearCache* near_cache = nullptr;
    const std::shared_ptr<const protocol::LearnedCommands>* learned = nullptr;
    SlowLog* slow_log = nullptr;
    const std::shared_ptr<const WriteRefusals>* refusals = nullptr;
    const std::vector<TenantLimiter*>* namespace_limiters = nullptr;
    MigrationGate* migrations = nullptr;
  };
  void provide(const Services& services) { s_ = services; }

 private:
  Services s_;
};

}  // namespace santral::router
