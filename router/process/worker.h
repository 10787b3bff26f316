#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "placement/topology.h"
#include "protocol/learned_commands.h"
#include "router/backend/connection_pool.h"
#include "router/backend/replica_watch.h"
#include "router/metrics/stats.h"
#include "router/plan/request_sampler.h"
#include "router/routes/key_pull.h"
#include "router/routes/script_cache.h"
#include "router/runtime/shared_state.h"
#include "router/runtime/slow_log.h"
#include "router/runtime/worker_services.h"
#include "router/session/session_input.h"

namespace santral::router {

class Client;
class HotKeyDetector;
class NearCache;
class TrackingConnections;
class TrackingLanes;
class SaltTable;

// One thread with its own io_context, its own clients and its own connections to every shard.
// Nothing a worker touches on the request path is shared with another worker; workers reach
// each other, and the server reaches them, only by post().
class Worker final : public WorkerServices {
 public:
  Worker(unsigned index, placement::TopologyPtr topology, SharedState& shared,
         MigrationGate& migrations);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void start();  // connects to the shards and starts the thread
  void stop();   // from any thread: closes everything, stops and joins the thread

  // Takes over an accepted client connection (`tls`: from the TLS listener); must run on this
  // worker's thread.
  void adopt(boost::asio::ip::tcp::socket socket, std::uint64_t client_id, bool tls);
  // A client's buffered, unparsed input went from `before` to `after` bytes; past this worker's
  // share of limits.max_input_bytes_total the client holding the most stops being read.
  void input_changed(std::size_t before, std::size_t after) override;
  std::size_t buffered_input() const { return buffered_input_; }
  // A reload: new requests use `topology`; must run on this worker's thread.
  void apply(placement::TopologyPtr topology);
  // While a move changes direction (starts, is aborted) no worker may pull a key before every
  // worker has switched: pulls wait here until the server releases them (router/resharding/).
  bool holding_moves() const override { return holding_moves_; }
  void hold_pull(RequestContext& client, std::uint64_t slot,
                 std::vector<PullGroup> groups) override;
  // Counts switches of direction: a pull sent before one is not carried on after it.
  std::uint64_t direction() const override { return direction_; }
  // Runs `then` at once, or, while pulls are held, when they are released (a fold's step).
  void after_moves_released(std::function<void()> then) override;
  void release_moves();
  // Graceful shutdown: clients are no longer read from; each is closed once every request it
  // had sent is answered. `drained` runs on this thread when no client is left.
  void drain(std::function<void()> drained);

  // WorkerServices (router/runtime/worker_services.h says what each is).
  ConnectionPool& pool() override { return pool_; }
  InputPool& inputs() override { return inputs_; }
  TrackingConnections& near_cache_connections() override { return *near_cache_connections_; }
  TrackingLanes& lanes() override { return *lanes_; }
  // The commands learned from the shards and `commands:` (router/catalog/), and the shards'
  // lowest version: an immutable snapshot the catalog replaces whole, on this thread.
  void set_learned(std::shared_ptr<const protocol::LearnedCommands> learned) {
    learned_ = std::move(learned);
  }
  // The shards whose writes are refused (router/process/sentinel_failover.h), replaced whole
  // on this thread.
  void set_write_refusals(std::shared_ptr<const WriteRefusals> refusals) {
    write_refusals_ = std::move(refusals);
  }
  void refresh_salts() override;
  // namespace_limiters() for the map in force (shared().limiters is configured first).
  void refresh_namespace_limits();
  void remember_script(std::string_view body) override;
  void forget_scripts() override;

  // Every worker of the server, this one included (set once before start).
  void set_peers(std::vector<Worker*> peers);
  const std::vector<WorkerServices*>& peers() const override { return peer_services_; }

  const WorkerTotals& published() const override { return published_; }

  void forget(RequestContext& client) override;
  void for_each_client(const std::function<void(RequestContext&)>& visit) override;
  std::size_t client_count() const override { return clients_.size(); }
  void push_to(std::uint64_t client, const std::string& frame) override;
  // CLIENT TRACKING ... REDIRECT: `keys` of an invalidation for client `from` (of this worker)
  // go to client `to` on worker `to_worker`; `from` is told if `to` is gone.
  void redirect_invalidation(std::uint64_t from, std::uint64_t to, unsigned to_worker,
                             std::string keys) override;

 private:
  void tick();
  void publish();
  void change_direction();
  void admit_hot_reads(std::chrono::steady_clock::time_point now);
  void follow_catalog();

  // Calls `visit` for each client of this worker (on this worker's thread), each held.
  void visit_clients(const std::function<void(Client&)>& visit);
  Client* find_client(std::uint64_t id) const;
  void park_idle_sessions(std::chrono::steady_clock::time_point now);
  void close_idle_sessions(std::chrono::steady_clock::time_point now);
  void check_session_deadlines(std::chrono::steady_clock::time_point now);
  std::size_t input_share() const;
  void stop_largest_reader();
  void resume_starved_reader();

  unsigned index_;
  placement::TopologyPtr topology_;
  SharedState& shared_;
  // Before io_: a client its handlers keep alive gives its input back as io_ destroys them.
  InputPool inputs_;
  std::chrono::steady_clock::time_point last_park_sweep_{};
  // Every socket and timer of a worker is used (and registered) only on its thread; other
  // threads only post() to it, which keeps its lock under this hint.
  boost::asio::io_context io_{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer ticker_;
  WorkerStats stats_;
  ReplicaWatch replica_watch_;  // the first worker's; before pool_, whose replies it takes
  ConnectionPool pool_;
  ScriptCache scripts_;
  std::unique_ptr<HotKeyDetector> hotkeys_;
  RequestSampler sampler_;
  SlowLog slow_log_;
  std::unique_ptr<SaltTable> salts_;
  std::unique_ptr<NearCache> near_cache_;
  std::unique_ptr<TrackingConnections> near_cache_connections_;
  std::unique_ptr<TrackingLanes> lanes_;
  std::vector<Worker*> peers_;
  std::vector<WorkerServices*> peer_services_;  // the same, as their services
  std::shared_ptr<const protocol::LearnedCommands> learned_ =
      std::make_shared<const protocol::LearnedCommands>();
  std::shared_ptr<const WriteRefusals> write_refusals_;
  std::vector<TenantLimiter*> namespace_limiters_;  // namespace_limiters()
  std::unordered_map<std::uint64_t, Client*> clients_;
  // Clients that must finish their TLS handshake (tls.handshake_timeout_ms) or AUTH
  // (limits.auth_timeout_ms) by a deadline; one timeout each, so each list is in deadline order.
  struct SessionDeadline {
    std::chrono::steady_clock::time_point at;
    std::uint64_t client;
  };
  std::deque<SessionDeadline> handshake_deadlines_;
  std::deque<SessionDeadline> auth_deadlines_;
  std::size_t buffered_input_ = 0;  // every client's unparsed input (limits.max_input_bytes_total)
  // Sessions that stopped reading for it, oldest first (closed ones are dropped when reached).
  std::deque<boost::intrusive_ptr<Client>> starved_;
  std::function<void()> drained_;  // set while draining
  struct HeldPull {
    boost::intrusive_ptr<RequestContext> client;
    std::uint64_t slot;
    std::vector<PullGroup> groups;
    std::chrono::steady_clock::time_point since;
  };
  void expire_held_pulls(std::chrono::steady_clock::time_point now);
  bool holding_moves_ = false;
  std::uint64_t direction_ = 0;
  std::vector<HeldPull> held_pulls_;
  std::vector<std::function<void()>> after_release_;
  WorkerTotals published_;
  std::thread thread_;
};

// The server's workers as pointers, as fan_out and the fences take them: `T` is Worker or
// WorkerServices.
template <class T>
std::vector<T*> pointers_to(const std::vector<std::unique_ptr<Worker>>& workers) {
  std::vector<T*> out;
  out.reserve(workers.size());
  for (const auto& worker : workers) out.push_back(worker.get());
  return out;
}

}  // namespace santral::router
