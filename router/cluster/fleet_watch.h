#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/cluster_config.h"
#include "router/cluster/etcd_client.h"
#include "router/status/router_record.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

class ShardFence;

// The fleet's keys in etcd:
//   /santral/<name>/map               the shard map (map_document.h); mod_revision = version
//   /santral/<name>/salting           SANTRAL SALT/UNSALT and automatic salting
//   /santral/<name>/move              a move in progress (move_document.h)
//   /santral/<name>/coordinator       the router driving it, on its lease
//   /santral/<name>/routers/<router>  each live router (router_record.h), on its lease
struct FleetKeys {
  FleetKeys(const config::ClusterSettings& settings, const std::string& router);
  std::string map, salting, move, coordinator, routers, self;
};

struct FleetHooks {  // each runs on the server's thread
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

// What the first read of the fleet found (FleetAgent::join).
struct FleetJoined {
  std::optional<EtcdKeyValue> map;
  std::optional<EtcdKeyValue> salting;
  std::optional<EtcdKeyValue> move;
  bool published = false;  // this router's file made the map
  std::size_t others = 0;  // live routers of the fleet besides this one
};

// The fleet agent's thread's view of the fleet: this router's registration, the keys read
// every poll (what changed is posted to the server), the election of a move's coordinator, and
// the routers that went without saying so. Its etcd calls throw EtcdUnavailable; only the
// agent's thread calls them.
class FleetWatch {
 public:
  FleetWatch(const config::ClusterSettings& settings, RouterRecord self, EtcdClient& etcd);

  const FleetKeys& keys() const { return keys_; }
  void fence_with(ShardFence* fence) { fence_ = fence; }  // cluster.fence: acl
  void start(boost::asio::io_context& home, FleetHooks hooks);

  // At join: the fleet's keys, publishing `document` as the map when etcd has none (then
  // nullopt: read again). Counts what it read as seen.
  std::optional<FleetJoined> first_read(const std::string& document, bool& published);

  // `create`: the registration must not exist yet (a live router of this name: throws
  // RouterNameTaken). Otherwise it is updated, when changed, only while it is still this
  // lease's: false when it is gone, and the lease with it.
  bool register_self(bool create);
  void lease_taken(std::int64_t lease, std::string fence_user);
  void leave();  // says in the registration that this router stops
  std::int64_t lease() const;

  // Each returns whether the registration changed (to be written).
  bool acknowledge(std::int64_t version);
  bool acknowledge_salting(std::int64_t version);
  bool acknowledge_move(std::int64_t move_id, std::uint64_t epoch);
  void report_walk(std::uint64_t keys_moved);
  std::int64_t map_version() const;  // acknowledged

  // One read of the fleet's keys: posts what changed, elects, notes departures.
  void poll();
  void fence_departed();  // cluster.fence: acl
  void lease_lost();      // the coordinator key went with the lease

  std::int64_t seen_map_version() const { return seen_map_published_.load(); }
  std::vector<RouterRecord> routers() const;
  std::vector<RouterRecord> departed() const;

 private:
  void elect(const std::optional<EtcdKeyValue>& move, const std::optional<EtcdKeyValue>& holder);
  void note_departures(const std::vector<RouterRecord>& routers);
  void coordinate(bool mine);

  config::ClusterSettings settings_;
  FleetKeys keys_;
  std::string name_;  // this router's
  EtcdClient& etcd_;
  ShardFence* fence_ = nullptr;
  boost::asio::io_context* home_ = nullptr;
  FleetHooks hooks_;

  // the agent's thread only
  std::vector<std::int64_t> granted_;  // every lease this process took
  std::string routers_seen_;           // the records as last read, to tell when they change
  std::vector<RouterRecord> seen_routers_;
  std::int64_t seen_map_ = 0, seen_salting_ = 0, seen_move_ = 0;
  bool coordinating_ = false;
  std::atomic<std::int64_t> seen_map_published_{0};  // seen_map_, for the server's thread

  struct Departure {
    RouterRecord record;
    std::int64_t at_ns;   // lease clock, when its registration was seen gone
    bool fenced = false;  // cluster.fence: acl: its shard user is shut out everywhere
  };
  mutable std::mutex mutex_;  // guards what follows
  RouterRecord self_;
  bool self_dirty_ = true;
  std::vector<RouterRecord> routers_;  // as last read
  std::vector<Departure> departures_;
};

}  // namespace santral::router
