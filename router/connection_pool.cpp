#include "router/connection_pool.h"

#include <algorithm>

namespace santral::router {

namespace {

// Idle dedicated connections kept per shard and profile, per worker.
constexpr std::size_t kMaxIdle = 16;

}  // namespace

ConnectionPool::ConnectionPool(boost::asio::io_context& io, const config::Config& config,
                               const config::ShardMap& shard_map)
    : io_(io), config_(config), shard_map_(shard_map) {
  default_profile_.database = config.backend.database;
  for (std::size_t s = 0; s < shard_map_.shard_count(); ++s) {
    auto& connections = default_shared_.emplace_back();
    for (std::uint32_t c = 0; c < config_.backend.connections_per_shard; ++c)
      connections.push_back(new BackendConnection(
          io_, {s, shard_map_.shard(s).name, shard_map_.shard(s).address, default_profile_},
          config_));
  }
}

void ConnectionPool::start() {
  for (auto& connections : default_shared_)
    for (auto& connection : connections) connection->start();
}

void ConnectionPool::stop() {
  for (auto& connections : default_shared_)
    for (auto& connection : connections) connection->stop();
  for (auto& [key, connections] : other_shared_)
    for (auto& connection : connections) connection->stop();
  for (auto& [key, connections] : idle_)
    for (auto& connection : connections) connection->stop();
  for (auto& connection : lent_) connection->stop();
  idle_.clear();
  lent_.clear();
}

BackendConnectionPtr ConnectionPool::open(std::size_t shard, const ConnectionProfile& profile,
                                          ConnectionRole role) {
  BackendConnectionPtr connection(new BackendConnection(
      io_, {shard, shard_map_.shard(shard).name, shard_map_.shard(shard).address, profile}, config_,
      role));
  connection->start();
  return connection;
}

BackendConnection& ConnectionPool::shared(std::size_t shard, const ConnectionProfile& profile,
                                          std::uint64_t client_id) {
  if (profile == default_profile_) {
    auto& connections = default_shared_[shard];
    return *connections[client_id % connections.size()];
  }
  auto& connections = other_shared_[key(shard, profile)];
  if (connections.empty())
    for (std::uint32_t c = 0; c < config_.backend.connections_per_shard; ++c)
      connections.push_back(open(shard, profile, ConnectionRole::Shared));
  return *connections[client_id % connections.size()];
}

BackendConnectionPtr ConnectionPool::lend(std::size_t shard, const ConnectionProfile& profile) {
  auto& idle = idle_[key(shard, profile)];
  while (!idle.empty()) {
    BackendConnectionPtr connection = std::move(idle.back());
    idle.pop_back();
    if (connection->usable()) {
      lent_.push_back(connection);
      return connection;
    }
    connection->stop();
  }
  auto connection = open(shard, profile, ConnectionRole::Dedicated);
  lent_.push_back(connection);
  return connection;
}

void ConnectionPool::give_back(BackendConnectionPtr connection) {
  std::erase(lent_, connection);
  const auto& target = connection->target();
  auto& idle = idle_[key(target.shard_index, target.profile)];
  // A connection may come back with a reply still in flight (the EXEC that ended a
  // transaction): the next borrower's requests simply queue behind it.
  if (connection->state() == BackendConnection::State::Up && idle.size() < kMaxIdle) {
    idle.push_back(std::move(connection));
  } else {
    connection->stop();
  }
}

void ConnectionPool::drop(const BackendConnectionPtr& connection) {
  std::erase(lent_, connection);
  connection->stop();
}

BackendConnectionPtr ConnectionPool::subscriber(std::size_t shard,
                                                const ConnectionProfile& profile) {
  auto connection = open(shard, profile, ConnectionRole::Subscriber);
  lent_.push_back(connection);
  return connection;
}

void ConnectionPool::check_deadlines(std::chrono::steady_clock::time_point now) {
  for (auto& connections : default_shared_)
    for (auto& connection : connections) connection->check_deadlines(now);
  for (auto& [key, connections] : other_shared_)
    for (auto& connection : connections) connection->check_deadlines(now);
  for (auto& connection : lent_) connection->check_deadlines(now);
}

}  // namespace santral::router
