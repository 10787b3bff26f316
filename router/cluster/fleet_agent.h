#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/cluster_config.h"
#include "router/cluster/etcd_client.h"
#include "router/cluster/shard_fence.h"
#include "router/status/fleet_view.h"
#include "router/status/router_record.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

// This router's link to the fleet's shared state in etcd, on threads of its own (etcd calls
// block): one keeps the router's lease alive and nothing else, so that no slow call can hold
// a keepalive back; the other registers the router, reads the fleet's keys every poll_ms and
// tells the server (on its io_context) when the map or the salting changed, and carries out
// the server's proposals as compare-and-swaps.
//
// Out of touch means out: the router may reach the shards only until 2/3 of its lease after
// the last keepalive etcd answered (on the lease clock, which counts suspended time), and not
// at all once a keepalive says the lease is gone. It serves on past that only with proof that
// no lease can expire: a majority of the cluster's members, as etcd lists them, answered that
// they have no leader (or, by explicit choice, cluster.serve_when_etcd_down, while no member
// answers at all). Refusals, resets and timeouts prove nothing.
//
//   /santral/<name>/map               the shard map (map_document.h); mod_revision = version
//   /santral/<name>/salting           SANTRAL SALT/UNSALT and automatic salting
//   /santral/<name>/move              a move in progress (move_document.h)
//   /santral/<name>/coordinator       the router driving it, on its lease
//   /santral/<name>/routers/<router>  each live router (router_record.h), on its lease
class FleetAgent {
 public:
  struct Hooks {  // each runs on the server's thread
    std::function<void(const EtcdKeyValue&)> map_changed;
    std::function<void(const EtcdKeyValue&)> salting_changed;
    std::function<void()> routers_changed;  // a router came, went or acknowledged something
    // The move document changed (nullopt: there is none any more).
    std::function<void(const std::optional<EtcdKeyValue>&)> move_changed;
    // This router became, or stopped being, the coordinator of the move.
    std::function<void(bool)> coordinating;
    // Back in the fleet after its lease had expired, with what changed meanwhile posted
    // before: `confirm` lets it serve again; the server calls it once every worker has taken
    // those changes.
    std::function<void(std::function<void()> confirm)> rejoined;
  };

  FleetAgent(config::ClusterSettings settings, RouterRecord self);
  ~FleetAgent();

  // At start-up, before serving: registers the router on a lease of its own, then reads the
  // fleet's map (publishing `document` first when etcd has
  // none and `document` is not empty) and salting. Throws EtcdUnavailable when etcd does not
  // answer within cluster.start_timeout_ms.
  struct Joined {
    std::optional<EtcdKeyValue> map;
    std::optional<EtcdKeyValue> salting;
    std::optional<EtcdKeyValue> move;
    bool published = false;  // this router's file made the map
    std::size_t others = 0;  // live routers of the fleet besides this one
  };
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
  using Proposed = std::function<void(std::int64_t revision, std::string error)>;
  void propose(std::string key, std::string value, std::int64_t expected, Proposed done);
  // Writes at `key` what `change` makes of its value ("" when absent), as a compare-and-swap
  // tried again when another router changed it meanwhile; `change` runs on the agent's thread.
  using Change = std::function<std::string(const std::string& current)>;
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
  using Action = std::function<std::string(EtcdClient& etcd, std::int64_t& revision)>;
  void call(Action action, Proposed done);
  const std::string& move_key() const { return move_key_; }
  const std::string& coordinator_key() const { return coordinator_key_; }

  const std::string& map_key() const { return map_key_; }
  const std::string& salting_key() const { return salting_key_; }
  const config::ClusterSettings& settings() const { return settings_; }
  const std::string& router_name() const { return router_name_; }
  std::int64_t lease() const;
  // The map version etcd held at the last read (what a rejoining router must serve).
  std::int64_t seen_map_version() const { return seen_map_published_.load(); }

  // What the last read of etcd found, for SANTRAL ROUTERS and /routers.
  using View = FleetView;
  View view() const;

 private:
  struct Job {
    std::string key, value;
    std::int64_t expected;
    Change change;  // set: a read-modify-write instead of a put on `expected`
    Action action;  // set: runs it instead
    Proposed done;
  };
  void run();
  void keep();
  void poll();
  bool keep_alive(EtcdClient& etcd);
  bool quorum_lost(EtcdClient& etcd);
  bool prove_no_quorum();
  void take_lease(bool rejoining);
  void confirmed(std::int64_t asked_ns);
  void revoke_serving(const std::string& why);
  void register_self(bool create);
  void note_departures(const std::vector<RouterRecord>& routers);
  void elect(const std::optional<EtcdKeyValue>& move, const std::optional<EtcdKeyValue>& holder);
  void carry_out(Job job);
  std::string read_modify_write(Job& job, std::int64_t& revision);

  boost::asio::io_context* home_ = nullptr;
  config::ClusterSettings settings_;
  std::string router_name_;
  std::string map_key_, salting_key_, move_key_, coordinator_key_, routers_prefix_, self_key_;
  EtcdClient etcd_;         // the agent thread's
  EtcdClient keeper_etcd_;  // the keepalive thread's
  Hooks hooks_;
  std::thread thread_;
  std::thread keeper_;
  std::atomic<std::int64_t>* serve_until_ = nullptr;
  std::optional<std::int64_t> rejoined_at_;  // agent thread only (lease clock ns)
  std::vector<std::int64_t> granted_;        // agent thread only: every lease this process took
  // The keeper found the lease gone: the agent joins again with a new one.
  std::atomic<bool> lease_lost_{false};
  // Back after its lease had expired: no keepalive lets it serve until the server has taken
  // what changed meanwhile (Hooks::rejoined).
  std::atomic<bool> rejoining_{false};

  mutable std::mutex lock_;  // guards what follows
  std::condition_variable wake_;
  std::condition_variable wake_keeper_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  RouterRecord self_;
  bool self_dirty_ = true;
  View view_;
  std::string routers_seen_;  // the records as last read, to tell when they change
  std::int64_t seen_map_ = 0, seen_salting_ = 0, seen_move_ = 0;
  std::atomic<std::int64_t> seen_map_published_{0};  // seen_map_, for the server's thread
  bool coordinating_ = false;
  std::chrono::steady_clock::time_point last_answer_ = std::chrono::steady_clock::now();
  std::atomic<std::int64_t> last_keepalive_ns_{0};  // lease clock: when the last one was sent
  // Lease clock: no leader can expire the lease before this + TTL.
  std::atomic<std::int64_t> lease_safe_from_ns_{0};
  // The cluster's members as etcd lists them (refreshed by the agent thread), for the proof
  // that etcd has no quorum.
  std::vector<std::string> members_;
  std::vector<RouterRecord> seen_routers_;  // agent thread only
  struct Departure {
    RouterRecord record;
    std::int64_t at_ns;   // lease clock, when its registration was seen gone
    bool fenced = false;  // cluster.fence: acl: its shard user is shut out everywhere
  };
  void fence_departed();
  bool lease_fresh() const;                  // a keepalive etcd answered within 2/3 of the lease
  std::unique_ptr<ShardFence> shard_fence_;  // cluster.fence: acl
  std::vector<Departure> departures_;
};

}  // namespace santral::router
