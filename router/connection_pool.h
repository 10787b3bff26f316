#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "config/shard_map.h"
#include "router/backend_connection.h"

namespace santral::router {

// One worker's connections to the shards:
// - shared, pipelined connections per shard and profile (database, RESP version), created
//   at start for the default profile and on first use for the others;
// - dedicated connections lent to one client at a time (a transaction, a blocking command)
//   and taken back for the next one when they come back clean, so a MULTI or a BLPOP does not
//   cost a new TCP connection;
// - subscriber connections, owned by one client for as long as it is subscribed.
class ConnectionPool {
 public:
  ConnectionPool(boost::asio::io_context& io, const config::Config& config,
                 const config::ShardMap& shard_map);

  void start();
  void stop();

  ConnectionProfile default_profile() const { return default_profile_; }

  // The shared connection that carries this client's requests to `shard`. A client always
  // gets the same one, so its requests to a shard keep their order.
  BackendConnection& shared(std::size_t shard, const ConnectionProfile& profile,
                            std::uint64_t client_id);
  // A connection for one client's exclusive use until give_back() or drop().
  BackendConnectionPtr lend(std::size_t shard, const ConnectionProfile& profile);
  // Takes a lent connection back; it is reused when it is up and idle, else closed.
  void give_back(BackendConnectionPtr connection);
  // Closes a lent or subscriber connection that must not be reused (it may still be inside a
  // transaction or blocked).
  void drop(const BackendConnectionPtr& connection);
  BackendConnectionPtr subscriber(std::size_t shard, const ConnectionProfile& profile);

  void check_deadlines(std::chrono::steady_clock::time_point now);

 private:
  using Key = std::tuple<std::size_t, int, int>;  // shard, database, protocol
  static Key key(std::size_t shard, const ConnectionProfile& p) {
    return {shard, p.database, p.protocol};
  }
  BackendConnectionPtr open(std::size_t shard, const ConnectionProfile& profile,
                            ConnectionRole role);

  boost::asio::io_context& io_;
  const config::Config& config_;
  const config::ShardMap& shard_map_;
  ConnectionProfile default_profile_;
  std::vector<std::vector<BackendConnectionPtr>> default_shared_;  // [shard][n]
  std::map<Key, std::vector<BackendConnectionPtr>> other_shared_;
  std::map<Key, std::vector<BackendConnectionPtr>> idle_;
  std::vector<BackendConnectionPtr> lent_;  // lent and subscriber connections, for deadlines
};

}  // namespace santral::router
