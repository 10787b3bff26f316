#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/cluster_config.h"
#include "router/cluster/etcd_client.h"
#include "router/cluster/fleet_watch.h"
#include "router/cluster/lease_keeper.h"
#include "router/cluster/proposals.h"
#include "router/cluster/shard_fence.h"
#include "router/cluster/wake_signal.h"
#include "router/status/fleet_view.h"
#include "router/status/router_record.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

// This router's link to the fleet's shared state in etcd, on threads of its own (etcd calls
// block): one keeps the router's lease alive and nothing else, so that no slow call can hold
// a keepalive back (LeaseKeeper); the other carries out the server's proposals as
// compare-and-swaps (Proposals), registers the router, reads the fleet's keys every poll_ms and
// tells the server (on its io_context) when the map or the salting changed (FleetWatch).
//
// Out of touch means out: the router may reach the shards only until 2/3 of its lease after
// the last keepalive etcd answered (on the lease clock, which counts suspended time), and not
// at all once a keepalive says the lease is gone. It serves on past that only with proof that
// no lease can expire: a majority of the cluster's members, as etcd lists them, answered that
// they have no leader (or, by explicit choice, cluster.serve_when_etcd_down, while no member
// answers at all). Refusals, resets and timeouts prove nothing.
// The fleet's keys: FleetKeys (fleet_watch.h).
class FleetAgent {
 public:
  using Hooks = FleetHooks;

  FleetAgent(config::ClusterSettings settings, RouterRecord self);
  ~FleetAgent();

  // At start-up, before serving: registers the router on a lease of its own, then reads the
  // fleet's map (publishing `document` first when etcd has
  // none and `document` is not empty) and salting. Throws EtcdUnavailable when etcd does not
  // answer within cluster.start_timeout_ms.
  using Joined = FleetJoined;
  Joined join(const std::string& document);

  // cluster.fence: acl: before join(), the admin account (backend.username/password) this
  // router makes its own shard user with and shuts departed routers out with.
  void fence_at_shards(ShardAccount admin);
  // The shards of the topology in force (a move's source map included): where this router
  // needs its shard user and where departed routers are shut out. Any thread.
  void use_shards(const std::vector<config::ShardConfig>& shards);
  // At start-up, after join(): makes this router's shard user on every shard before it serves
  // (false, with the error logged, when a shard could not be reached; tried again later).
  bool admit_at_shards();

  // Starts watching; what join() read counts as seen. `serve_until` (lease_clock.h ns) is kept
  // at the time past which this router's lease may have expired on the others: 2/3 of the
  // lease after the last keepalive etcd answered, later only while etcd has no quorum.
  // The hooks and the answers to proposals run on `home` (the server's thread).
  void start(boost::asio::io_context& home, Hooks hooks, std::atomic<std::int64_t>* serve_until);
  void stop();  // leaves the fleet: says so in its registration, then revokes the lease

  // Writes `value` at `key` while its mod_revision is still `expected`; `done` gets the new
  // revision, or an error for the client (etcd unreachable, changed meanwhile).
  using Proposed = Proposals::Done;
  void propose(std::string key, std::string value, std::int64_t expected, Proposed done);
  // Writes at `key` what `change` makes of its value ("" when absent), as a compare-and-swap
  // tried again when another router changed it meanwhile; `change` runs on the agent's thread.
  using Change = Proposals::Change;
  void update(std::string key, Change change, Proposed done);
  // This router now serves map version `version` (written into its registration).
  void acknowledge(std::int64_t version);
  // This router routes by salting version `version`, and what it sent before is answered.
  void acknowledge_salting(std::int64_t version);
  // Likewise for epoch `epoch` of the move `move_id` (its document's create_revision).
  void acknowledge_move(std::int64_t move_id, std::uint64_t epoch);
  // As the coordinator: how many keys its walk has moved (for every router's STATUS).
  void report_walk(std::uint64_t keys_moved);
  // Runs `action` with the etcd client on the agent's thread: "" or an error, and the revision
  // it made. For the compare-and-swaps of a move.
  using Action = Proposals::Action;
  void call(Action action, Proposed done);
  const std::string& move_key() const { return watch_.keys().move; }
  const std::string& coordinator_key() const { return watch_.keys().coordinator; }

  const std::string& map_key() const { return watch_.keys().map; }
  const std::string& salting_key() const { return watch_.keys().salting; }
  const config::ClusterSettings& settings() const { return settings_; }
  const std::string& router_name() const { return router_name_; }
  std::int64_t lease() const;
  // The map version etcd held at the last read (what a rejoining router must serve).
  std::int64_t seen_map_version() const { return watch_.seen_map_version(); }

  // What the last read of etcd found, for SANTRAL ROUTERS and /routers.
  using View = FleetView;
  View view() const;

 private:
  void run();
  void round();
  void take_lease(bool rejoining);
  void rejoin();  // a new lease after the last was lost, and registered on it

  config::ClusterSettings settings_;
  std::string router_name_;
  EtcdClient etcd_;  // the agent thread's
  LeaseKeeper keeper_;
  FleetWatch watch_;
  Proposals proposals_;
  WakeSignal wake_;  // the agent's thread: proposals, a registration to write, a lease lost
  std::unique_ptr<ShardFence> shard_fence_;  // cluster.fence: acl
  boost::asio::io_context* home_ = nullptr;
  std::function<void(std::function<void()> confirm)> rejoined_;  // Hooks::rejoined
  std::thread thread_;
  std::uint64_t rounds_ = 0;                    // agent thread only
  std::optional<std::int64_t> rejoined_lease_;  // agent thread only: to be confirmed

  mutable std::mutex lock_;  // guards what follows: whether etcd answers, for view()
  View touch_;
  std::chrono::steady_clock::time_point last_answer_ = std::chrono::steady_clock::now();
};

}  // namespace santral::router
