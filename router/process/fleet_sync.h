#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "router/cluster/fleet_agent.h"
#include "router/process/fleet_start.h"
#include "router/resharding/fleet_ledger.h"
#include "router/resharding/move_driver.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

// What the server's parts (its fleet link, Sentinel failover) need of it (implemented by
// Server).
class RouterHost {
 public:
  virtual ~RouterHost() = default;
  virtual const placement::TopologyPtr& serving() const = 0;
  virtual std::uint64_t next_version() = 0;
  // Makes `topology` the one every worker routes by (a map etcd holds, the same placement).
  virtual void put_in_force(placement::TopologyPtr topology) = 0;
  virtual ControlPlane::ReloadResult remember_reload(std::string_view why,
                                                     ControlPlane::ReloadResult result) = 0;
  // Waits until every worker answered what it had sent (back from an outage), then `done`.
  virtual void barrier_all(std::function<void()> done) = 0;
};

// The server's side of a fleet (`cluster:`), on the server's thread: the map in force comes
// from etcd, and reloads and SANTRAL MAP PUSH propose the next one there; a move lives in etcd
// (router/resharding/fleet_ledger.h) and starts once this router serves the map it starts from.
class FleetSync {
 public:
  FleetSync(boost::asio::io_context& io, RouterHost& host, SharedState& shared, FleetStart& start);

  FleetAgent& agent() { return *agent_; }
  FleetLedger& ledger() { return *ledger_; }
  // The driver carrying out the fleet's moves here (made with ledger()).
  void set_driver(MoveDriver& driver) { driver_ = &driver; }
  // `file`: the router's first topology, from the file; with the fleet's map version and the
  // map salted counters are named by.
  placement::TopologyPtr first_topology(const placement::TopologyPtr& file) const;

  // Watches etcd; `salting` takes the fleet's salting versions; `tick` runs on every read.
  void start(std::function<void(const EtcdKeyValue&)> salting, std::function<void()> tick);
  void stop();

  FleetView view() const;
  // GET /readyz: why this router must not get new clients (ControlPlane::unready()): its
  // lease unconfirmed, the fleet's map refused or not served yet.
  std::optional<ControlPlane::Unready> unready() const;
  // Fleet: the map in force with its shared part taken from a map read from etcd; an error
  // when it is refused.
  struct FleetMap {
    std::shared_ptr<placement::Topology> topology;  // its versions set by the caller
    std::string text;
    std::string naming_text;  // the map salted counters are named by (empty: text)
    std::string pushed_by;
    std::string error;
    bool moves = false;   // built, but it gives keys new owners (error says so)
    bool missed = false;  // its lineage says the fleet went on past this router's map
  };
  FleetMap fleet_map(const std::string& key, const std::string& document) const;
  // The topology of `shared_text` (a map's shared part) with this router's own settings.
  std::shared_ptr<placement::Topology> topology_of(const std::string& shared_text,
                                                   std::string& error) const;
  // Proposes `shared_text` (config/shared_map.h) as the next map version.
  void propose_map(const std::string& shared_text,
                   std::function<void(ControlPlane::ReloadResult)> done);
  // SANTRAL MAP PUSH: a config file's text.
  void push_map(std::string text, std::function<void(ControlPlane::ReloadResult)> done);
  // A reload read `file_map` (the shared part of the file): whether it is new to the fleet.
  bool file_map_is_new(const std::string& file_map);

 private:
  // A map version read from etcd: every router takes it, the one that proposed it too.
  void take_map(const EtcdKeyValue& map);
  // The move document changed in etcd (nullopt: there is none any more).
  void take_move(const std::optional<EtcdKeyValue>& move);
  // A move record (from etcd, or from this router's own write) for the driver, once this
  // router serves the map the move starts from.
  void offer_move(const std::optional<LedgerMove>& move);
  // Back after its lease expired: it serves again once it serves etcd's map.
  void rejoin(std::function<void()> confirm);

  boost::asio::io_context& io_;
  RouterHost& host_;
  SharedState& shared_;
  std::unique_ptr<FleetAgent> agent_;
  std::unique_ptr<FleetLedger> ledger_;
  MoveDriver* driver_ = nullptr;
  std::uint64_t start_map_version_;
  std::string map_text_;       // the shared part of the map in force
  std::string naming_text_;    // ... of the map salted counters are named by (empty: it)
  std::string file_map_text_;  // the shared part of the file, as last read
  std::function<void()> rejoin_;
  std::optional<EtcdKeyValue> joined_move_;  // the move etcd held at start, taken in start()
  std::optional<LedgerMove> waiting_move_;   // a move from a map this router has not taken yet
};

// Every shard a request of `topology` may reach: its map's (a move's source shards are in it,
// draining) and the salted counters' naming map's.
std::vector<config::ShardConfig> shards_of(const placement::Topology& topology);

}  // namespace santral::router
