#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "protocol/learned_commands.h"
#include "router/backend/connection_pool.h"
#include "router/hotkeys/detection/hot_key_detector.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/metrics/stats.h"
#include "router/resharding/migration_gate.h"
#include "router/routes/script_cache.h"
#include "router/runtime/shared_state.h"
#include "router/runtime/worker_services.h"

namespace santral::test {

// Four shards, shard0..shard3 on 127.0.0.1:7000..7003 (never connected to).
inline const std::string kFourShards =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "  - {name: shard2, address: 127.0.0.1:7002}\n"
    "  - {name: shard3, address: 127.0.0.1:7003}\n";

// A worker for unit tests of routes and commands: a real topology (from YAML text), real
// counters, scripts, salts and hot-key detector, and two io_contexts: io(), where work is
// posted to the worker (a test may poll it), and the one its pool's and tracking lanes'
// connections live on, which is never run, so nothing it holds ever reaches a socket. What no
// test needs throws std::logic_error("not in the fake"), or, for the services read through
// pointers (the sampler, the near cache), is left out. Moves: serve() installs a topology (a
// moving one, router/resharding/moving_topology.h), hold_moves() makes pulls wait in `held`,
// and switch_direction() counts a switch of direction.
class FakeWorkerServices final : public router::WorkerServices {
 public:
  // `yaml`: a santral.yaml's text, parsed as "fake.yaml".
  explicit FakeWorkerServices(const std::string& yaml);
  ~FakeWorkerServices() override;

  // A real pool, opened on first use: its connections resolve their shard's address (a
  // numeric one resolves without the network) and, the io_context never running, go no
  // further; what is lent from it queues and is never written.
  router::ConnectionPool& pool() override;
  router::InputPool& inputs() override;
  void input_changed(std::size_t before, std::size_t after) override;
  router::TrackingConnections& near_cache_connections() override;
  router::TrackingLanes& lanes() override;
  void refresh_salts() override;
  void remember_script(std::string_view body) override { scripts_.remember(body); }
  void forget_scripts() override { scripts_.clear(); }

  bool holding_moves() const override { return holding_; }
  // Recorded in `held`, not sent.
  void hold_pull(router::RequestContext& client, std::uint64_t slot,
                 std::vector<router::PullGroup> groups) override;
  std::uint64_t direction() const override { return direction_; }
  void after_moves_released(std::function<void()> then) override { then(); }

  const std::vector<router::WorkerServices*>& peers() const override { return peers_; }
  const router::WorkerTotals& published() const override { return totals_; }
  void for_each_client(const std::function<void(router::RequestContext&)>& visit) override;
  std::size_t client_count() const override { return clients_.size(); }
  void forget(router::RequestContext& client) override;
  void push_to(std::uint64_t, const std::string&) override {}
  void redirect_invalidation(std::uint64_t from, std::uint64_t to, unsigned to_worker,
                             std::string keys) override;

  // The io_context the pool's and the lanes' connections live on. Nothing runs it, unless a
  // test whose shards are scripted ones (scripted_shard.h) does, so that they connect.
  boost::asio::io_context& connections_io() { return connections_io_; }
  // Stops the pool and forgets it (a client's end does: what it gave back may still owe it
  // replies); the next pool() opens a new one.
  void close_pool();
  // A client of this worker, for CLIENT LIST and for_each_client (the fake adds itself).
  void add_client(router::RequestContext& client) { clients_.push_back(&client); }

  // --- moves ---
  // From now on the worker routes by `topology` (its pool and lanes follow it). Clients made
  // before keep the connections they made under the old one.
  void serve(placement::TopologyPtr topology);
  // While on, pulls are held (holding_moves()) rather than sent.
  void hold_moves(bool on) { holding_ = on; }
  // A move changes direction: a pull sent before is not carried on after.
  void switch_direction() { ++direction_; }
  struct HeldPull {
    router::RequestContext* client;
    std::uint64_t slot;
    std::vector<router::PullGroup> groups;
  };
  std::vector<HeldPull> held;  // hold_pull()'s, in order

 private:
  boost::asio::io_context io_;  // first: what runs on it goes before it
  // The pool's and the lanes' connections: never run, so they never connect.
  boost::asio::io_context connections_io_;
  placement::TopologyPtr topology_;
  router::SharedState shared_;
  router::MigrationGate migrations_;
  router::WorkerStats stats_;
  router::WorkerTotals totals_;
  router::ScriptCache scripts_;
  router::SaltTable salts_;
  router::HotKeyDetector hotkeys_;
  std::shared_ptr<const protocol::LearnedCommands> learned_ =
      std::make_shared<const protocol::LearnedCommands>();
  std::vector<router::WorkerServices*> peers_;
  std::vector<router::RequestContext*> clients_;
  std::unique_ptr<router::ConnectionPool> pool_;
  std::unique_ptr<router::TrackingLanes> lanes_;
  bool holding_ = false;
  std::uint64_t direction_ = 0;
};

}  // namespace santral::test
