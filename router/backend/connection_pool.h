#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "router/backend/backend_connection.h"
#include "router/backend/replica_freshness.h"
#include "router/metrics/stats.h"

namespace santral::router {

// One worker's connections to the shards:
// - shared, pipelined connections per server (a shard's primary and each replica) and profile
//   (database, RESP version), created at start for the default profile and on first use for
//   the others;
// - dedicated connections lent to one client at a time (a transaction, a blocking command)
//   and taken back for the next one when they come back clean, so a MULTI or a BLPOP does not
//   cost a new TCP connection;
// - subscriber connections, owned by one client for as long as it is subscribed.
// Connections belong to a server address, not to a place in the map: a reload keeps the
// connections of shards it keeps, opens the new ones, and lets the removed ones finish what
// they carry before closing them.
class ConnectionPool {
 public:
  ConnectionPool(boost::asio::io_context& io, WorkerStats& stats, ReplicaFreshness& freshness);

  // Brings the connections in line with `topology` (the first call opens them all).
  void apply(const placement::Topology& topology);
  void stop();

  ConnectionProfile default_profile() const { return default_profile_; }

  // The shared connection that carries this client's requests to `shard`'s primary. A client
  // always gets the same one, so its requests to a shard keep their order.
  BackendConnection& shared(std::size_t shard, const ConnectionProfile& profile,
                            std::uint64_t client_id);
  // Where a read-only command for `shard` goes, by `read_from` (the key's namespace's, or the
  // config's): a replica that is up and in sync (replica_freshness.h), or the primary.
  BackendConnection& for_read(std::size_t shard, const ConnectionProfile& profile,
                              std::uint64_t client_id, config::ReadFrom read_from);
  // The shared connection of client 0 to replica `r` of `shard`, and every replica's
  // freshness (replica_watch.h).
  BackendConnection& replica(std::size_t shard, std::size_t r, const ConnectionProfile& profile);
  std::vector<std::shared_ptr<ReplicaFreshness::State>> replica_states(std::size_t shard) const;
  // A connection for one client's exclusive use until give_back() or drop().
  BackendConnectionPtr lend(std::size_t shard, const ConnectionProfile& profile);
  // Takes a lent connection back; it is reused when it is up, else closed.
  void give_back(BackendConnectionPtr connection);
  // Closes a lent or subscriber connection that must not be reused (it may still be inside a
  // transaction or blocked).
  void drop(const BackendConnectionPtr& connection);
  BackendConnectionPtr subscriber(std::size_t shard, const ConnectionProfile& profile);

  // Every connection that may still carry a request routed before now to `shard` (every
  // shard: nullopt), for a barrier to wait out (router/routes/in_flight_barrier.h): shared ones of
  // every profile, primary and replicas; lent ones given back (the EXEC that ended a transaction
  // may be in flight, even before they have connected); retired ones. Not those lent out now: a
  // switch ends their transactions and the blocked calls on keys it moves.
  std::vector<BackendConnectionPtr> barrier_connections(std::optional<std::size_t> shard) const;

  void check_deadlines(std::chrono::steady_clock::time_point now);
  // Why `shard`'s primary is marked down, if it is: lent connections fail at once then.
  std::optional<std::string> down_reason(std::size_t shard) const;

  // How this worker sees each server of `shard`: the primary first, then the replicas.
  struct ServerState {
    std::string name;
    std::string address;
    bool replica;
    BackendConnection::State state;
    bool ejected;
    std::string reason;
    std::size_t in_flight;
    // A replica's: whether it may serve reads, how far behind it is (-1: unknown), and why.
    bool fresh = true;
    std::int64_t lag_ms = -1;
    std::string sync;

    std::string_view state_name() const { return BackendConnection::state_name(state, ejected); }
  };
  std::vector<ServerState> servers(std::size_t shard) const;

 private:
  using Profile = std::pair<int, int>;  // database, protocol
  struct Server {
    std::string name;  // for messages and statistics
    config::Endpoint address;
    std::vector<BackendConnectionPtr> shared;  // default profile
    std::map<Profile, std::vector<BackendConnectionPtr>> profiles;
    std::shared_ptr<ReplicaFreshness::State> freshness;  // a replica's
    // A primary that follows Sentinel: failover.wait_ms (BackendConnection::wait_while_down).
    std::chrono::milliseconds failover_wait{0};
  };
  struct Shard {
    Server primary;
    std::vector<Server> replicas;
    std::map<Profile, std::vector<BackendConnectionPtr>> idle;  // dedicated, for lend()
    BackendConnectionPtr no_fresh_replica;  // read_from: replica with none in sync: fails
  };

  BackendConnectionPtr open(std::size_t shard, const Server& server,
                            const ConnectionProfile& profile, ConnectionRole role);
  void fill(std::size_t shard, Server& server);
  void retire(Server& server);
  void retarget(std::size_t shard, Server& server, const std::string& name);
  void hand_over_waiting(std::size_t shard, Server& from, Server& to);
  std::vector<BackendConnectionPtr> connections_to(const Shard& demoted) const;
  BackendConnection& pick(std::size_t shard, Server& server, const ConnectionProfile& profile,
                          std::uint64_t client_id);

  boost::asio::io_context& io_;
  WorkerStats& stats_;
  ReplicaFreshness& freshness_;
  std::shared_ptr<const config::Config> config_;
  ConnectionProfile default_profile_;
  std::map<std::string, std::unique_ptr<Shard>> by_address_;  // by primary address
  std::vector<Shard*> shards_;                                // in the map's order
  std::vector<BackendConnectionPtr> lent_;                    // lent and subscriber connections
  std::vector<BackendConnectionPtr> retired_;                 // of removed shards, closed once idle
};

}  // namespace santral::router
