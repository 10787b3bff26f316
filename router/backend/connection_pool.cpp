#include "router/backend/connection_pool.h"

#include <algorithm>

#include <fmt/format.h>

namespace santral::router {

namespace {

// Idle dedicated connections kept per shard and profile, per worker.
constexpr std::size_t kMaxIdle = 16;

}  // namespace

ConnectionPool::ConnectionPool(boost::asio::io_context& io, WorkerStats& stats,
                               ReplicaFreshness& freshness)
    : io_(io), stats_(stats), freshness_(freshness) {}

BackendConnectionPtr ConnectionPool::open(std::size_t shard, const Server& server,
                                          const ConnectionProfile& profile, ConnectionRole role) {
  BackendConnection::Options options{role, nullptr, {}};
  if (role == ConnectionRole::Shared) options.wait_while_down = server.failover_wait;
  return BackendConnection::open(io_, {shard, server.name, server.address, profile}, config_,
                                 stats_.shards[server.name], std::move(options));
}

// Opens or closes default-profile connections until there are connections_per_shard.
void ConnectionPool::fill(std::size_t shard, Server& server) {
  auto wanted = static_cast<std::size_t>(config_->backend.connections_per_shard);
  while (server.shared.size() > wanted) {
    retired_.push_back(std::move(server.shared.back()));
    server.shared.pop_back();
  }
  while (server.shared.size() < wanted)
    server.shared.push_back(open(shard, server, default_profile_, ConnectionRole::Shared));
}

void ConnectionPool::retire(Server& server) {
  for (auto& connection : server.shared) retired_.push_back(std::move(connection));
  for (auto& [profile, connections] : server.profiles)
    for (auto& connection : connections) retired_.push_back(std::move(connection));
  server.shared.clear();
  server.profiles.clear();
}

void ConnectionPool::retarget(std::size_t shard, Server& server, const std::string& name) {
  server.name = name;
  auto each = [&](BackendConnection& connection) {
    connection.retarget(shard, name, config_);
    connection.wait_while_down(server.failover_wait);
  };
  for (auto& connection : server.shared) each(*connection);
  for (auto& [profile, connections] : server.profiles)
    for (auto& connection : connections) each(*connection);
}

// Sentinel's new primary of a shard: what waited for the old one (failover.wait_ms) goes to
// it, each client's requests on the connection with the same place, so in their order.
void ConnectionPool::hand_over_waiting(std::size_t shard, Server& from, Server& to) {
  for (std::size_t i = 0; i < from.shared.size(); ++i)
    to.shared[i % to.shared.size()]->adopt_waiting(from.shared[i]->take_waiting());
  for (auto& [profile, connections] : from.profiles)
    for (std::size_t i = 0; i < connections.size(); ++i)
      pick(shard, to, {profile.first, profile.second}, i)
          .adopt_waiting(connections[i]->take_waiting());
}

// Every connection to `demoted`'s primary, lent ones too.
std::vector<BackendConnectionPtr> ConnectionPool::connections_to(const Shard& demoted) const {
  std::vector<BackendConnectionPtr> all = demoted.primary.shared;
  for (const auto& [profile, connections] : demoted.primary.profiles)
    all.insert(all.end(), connections.begin(), connections.end());
  for (const auto& [profile, idle] : demoted.idle) all.insert(all.end(), idle.begin(), idle.end());
  for (const auto& connection : lent_)
    if (connection->target().address.text() == demoted.primary.address.text())
      all.push_back(connection);
  return all;
}

void ConnectionPool::apply(const placement::Topology& topology) {
  config_ = topology.config;
  ConnectionProfile previous = default_profile_;
  default_profile_ = {config_->backend.database, 2};
  // A new backend.database: the default connections SELECTed the old one.
  if (!(previous == default_profile_))
    for (auto& [address, shard] : by_address_) {
      retire(shard->primary);
      for (auto& replica : shard->replicas) retire(replica);
    }
  const auto& map = *topology.map;
  std::map<std::string, Shard*> before;  // by shard name
  for (Shard* shard : shards_) before.emplace(shard->primary.name, shard);
  std::map<std::string, std::unique_ptr<Shard>> kept;
  std::vector<Shard*> order;
  // Connections to primaries Sentinel demoted, with who took their place.
  std::vector<std::pair<BackendConnectionPtr, std::string>> demoted;
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    const auto& shard = map.shard(s);
    std::string address = shard.address.text();
    auto it = by_address_.find(address);
    std::unique_ptr<Shard> entry;
    if (it != by_address_.end()) {
      entry = std::move(it->second);
      by_address_.erase(it);
      entry->no_fresh_replica = nullptr;  // made again with this map's names
      for (auto& [profile, idle] : entry->idle)
        for (auto& connection : idle) connection->retarget(s, shard.name, config_);
    } else {
      entry = std::make_unique<Shard>();
      entry->primary.name = shard.name;
      entry->primary.address = shard.address;
    }
    entry->primary.failover_wait =
        shard.sentinel_master.empty() ? std::chrono::milliseconds(0) : config_->failover.wait;
    retarget(s, entry->primary, shard.name);
    fill(s, entry->primary);
    // Sentinel elected another primary: the old one is no longer in the map.
    if (auto old = before.find(shard.name); old != before.end() && old->second != entry.get() &&
                                            !map.shard_at(old->second->primary.address.text())) {
      hand_over_waiting(s, old->second->primary, entry->primary);
      if (!shard.sentinel_master.empty())
        for (auto& connection : connections_to(*old->second))
          demoted.emplace_back(std::move(connection), shard.address.text());
    }
    // Replicas are few; a change in the list reopens them.
    bool same_replicas = entry->replicas.size() == shard.replicas.size();
    for (std::size_t r = 0; same_replicas && r < shard.replicas.size(); ++r)
      same_replicas = entry->replicas[r].address.text() == shard.replicas[r].text();
    if (!same_replicas) {
      for (auto& replica : entry->replicas) retire(replica);
      entry->replicas.clear();
      for (const auto& address_r : shard.replicas)
        entry->replicas.push_back({fmt::format("{} replica {}", shard.name, address_r.text()),
                                   address_r,
                                   {},
                                   {},
                                   freshness_.state(address_r.text())});
    }
    for (auto& replica : entry->replicas) {
      retarget(s, replica, fmt::format("{} replica {}", shard.name, replica.address.text()));
      fill(s, replica);
    }
    order.push_back(entry.get());
    kept.emplace(std::move(address), std::move(entry));
  }
  // Shards no longer in the map: what they carry finishes, then they close.
  for (auto& [address, shard] : by_address_) {
    retire(shard->primary);
    for (auto& replica : shard->replicas) retire(replica);
    for (auto& [profile, idle] : shard->idle)
      for (auto& connection : idle) retired_.push_back(std::move(connection));
  }
  by_address_ = std::move(kept);
  shards_ = std::move(order);
  // Connections lent out keep their owner; their names follow the new map.
  for (auto& connection : lent_)
    if (auto s = map.shard_at(connection->target().address.text()))
      connection->retarget(*s, map.shard(*s).name, config_);
  // Once the pool is whole again (their clients hear of it, and may send again at once): no
  // reply from a demoted primary reaches anyone (BackendConnection::abandon).
  for (auto& [connection, elected] : demoted)
    connection->abandon(fmt::format("Sentinel elected {} in its place", elected));
}

void ConnectionPool::stop() {
  // Stopping tells clients, who may give connections back: collect everything first.
  std::vector<BackendConnectionPtr> all = std::move(lent_);
  all.insert(all.end(), retired_.begin(), retired_.end());
  auto collect = [&all](Server& server) {
    all.insert(all.end(), server.shared.begin(), server.shared.end());
    for (auto& [profile, connections] : server.profiles)
      all.insert(all.end(), connections.begin(), connections.end());
  };
  for (auto& [address, shard] : by_address_) {
    collect(shard->primary);
    for (auto& replica : shard->replicas) collect(replica);
    for (auto& [profile, idle] : shard->idle) all.insert(all.end(), idle.begin(), idle.end());
  }
  by_address_.clear();
  shards_.clear();
  lent_.clear();
  retired_.clear();
  for (auto& connection : all) connection->stop();
}

BackendConnection& ConnectionPool::pick(std::size_t shard, Server& server,
                                        const ConnectionProfile& profile, std::uint64_t client_id) {
  if (profile == default_profile_) return *server.shared[client_id % server.shared.size()];
  auto& connections = server.profiles[{profile.database, profile.protocol}];
  if (connections.empty())
    for (std::uint32_t c = 0; c < config_->backend.connections_per_shard; ++c)
      connections.push_back(open(shard, server, profile, ConnectionRole::Shared));
  return *connections[client_id % connections.size()];
}

std::vector<BackendConnectionPtr> ConnectionPool::barrier_connections(
    std::optional<std::size_t> shard) const {
  std::vector<BackendConnectionPtr> all;
  auto add = [&all](const Server& server) {
    all.insert(all.end(), server.shared.begin(), server.shared.end());
    for (const auto& [profile, connections] : server.profiles)
      all.insert(all.end(), connections.begin(), connections.end());
  };
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    if (shard && *shard != s) continue;
    add(shards_[s]->primary);
    for (const auto& replica : shards_[s]->replicas) add(replica);
    for (const auto& [profile, idle] : shards_[s]->idle)
      all.insert(all.end(), idle.begin(), idle.end());
  }
  // Their shard indices may be an older map's: every one is waited out.
  all.insert(all.end(), retired_.begin(), retired_.end());
  return all;
}

BackendConnection& ConnectionPool::shared(std::size_t shard, const ConnectionProfile& profile,
                                          std::uint64_t client_id) {
  return pick(shard, shards_[shard]->primary, profile, client_id);
}

BackendConnection& ConnectionPool::for_read(std::size_t shard, const ConnectionProfile& profile,
                                            std::uint64_t client_id, config::ReadFrom read_from) {
  Shard& entry = *shards_[shard];
  if (read_from == config::ReadFrom::Primary || entry.replicas.empty())
    return pick(shard, entry.primary, profile, client_id);
  // Start at a replica chosen by the client, so that clients spread over the replicas.
  std::size_t count = entry.replicas.size();
  bool bounded = config_->replica_max_lag.count() > 0;
  bool any_up = false;
  for (std::size_t i = 0; i < count; ++i) {
    auto& replica = entry.replicas[(client_id + i) % count];
    BackendConnection& connection = pick(shard, replica, profile, client_id);
    if (!connection.up()) continue;
    any_up = true;
    if (replica.freshness->fresh(bounded)) return connection;
  }
  if (read_from == config::ReadFrom::PreferReplica)
    return pick(shard, entry.primary, profile, client_id);
  // replica only: none is up, so this one fails fast with its reason.
  if (!any_up) return pick(shard, entry.replicas[client_id % count], profile, client_id);
  // Up, but none in sync: an error that says why, rather than a stale read.
  std::string why;
  for (const auto& replica : entry.replicas)
    why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", replica.address.text(),
                       replica.freshness->why());
  if (!entry.no_fresh_replica)
    entry.no_fresh_replica = BackendConnection::down(
        io_, {shard, entry.primary.name, entry.primary.address, profile}, config_,
        stats_.shards[entry.primary.name], ConnectionRole::Dedicated,
        fmt::format("read_from is replica and no replica is in sync ({})", why));
  return *entry.no_fresh_replica;
}

BackendConnection& ConnectionPool::replica(std::size_t shard, std::size_t r,
                                           const ConnectionProfile& profile) {
  return pick(shard, shards_[shard]->replicas.at(r), profile, 0);
}

std::vector<std::shared_ptr<ReplicaFreshness::State>> ConnectionPool::replica_states(
    std::size_t shard) const {
  std::vector<std::shared_ptr<ReplicaFreshness::State>> out;
  for (const auto& replica : shards_[shard]->replicas) out.push_back(replica.freshness);
  return out;
}

BackendConnectionPtr ConnectionPool::lend(std::size_t shard, const ConnectionProfile& profile) {
  Shard& entry = *shards_[shard];
  // A shard marked down: a connection that fails at once, rather than one that waits out
  // timeouts.connect_ms.
  if (auto reason = down_reason(shard)) {
    auto connection = BackendConnection::down(
        io_, {shard, entry.primary.name, entry.primary.address, profile}, config_,
        stats_.shards[entry.primary.name], ConnectionRole::Dedicated, *reason);
    lent_.push_back(connection);
    return connection;
  }
  auto& idle = entry.idle[{profile.database, profile.protocol}];
  while (!idle.empty()) {
    BackendConnectionPtr connection = std::move(idle.back());
    idle.pop_back();
    if (connection->usable()) {
      lent_.push_back(connection);
      return connection;
    }
    connection->stop();
  }
  auto connection = open(shard, entry.primary, profile, ConnectionRole::Dedicated);
  lent_.push_back(connection);
  return connection;
}

void ConnectionPool::give_back(BackendConnectionPtr connection) {
  std::erase(lent_, connection);
  const auto& target = connection->target();
  auto it = by_address_.find(target.address.text());
  // A connection may come back with a reply still in flight (the EXEC that ended a
  // transaction), even before it has connected: the next borrower's requests simply queue
  // behind it.
  if (it != by_address_.end() && connection->usable()) {
    auto& idle = it->second->idle[{target.profile.database, target.profile.protocol}];
    if (idle.size() < kMaxIdle) {
      idle.push_back(std::move(connection));
      return;
    }
  }
  // Not kept: it closes once it has answered what it still carries.
  retired_.push_back(std::move(connection));
}

void ConnectionPool::drop(const BackendConnectionPtr& connection) {
  std::erase(lent_, connection);
  connection->stop();
}

BackendConnectionPtr ConnectionPool::subscriber(std::size_t shard,
                                                const ConnectionProfile& profile) {
  auto connection = open(shard, shards_[shard]->primary, profile, ConnectionRole::Subscriber);
  lent_.push_back(connection);
  return connection;
}

void ConnectionPool::check_deadlines(std::chrono::steady_clock::time_point now) {
  auto check_server = [now](Server& server) {
    for (auto& connection : server.shared) connection->check_deadlines(now);
    for (auto& [profile, connections] : server.profiles)
      for (auto& connection : connections) connection->check_deadlines(now);
  };
  // A deadline that passes fails requests, and their clients may lend, give back or drop
  // connections right then: the lists are copied first.
  std::vector<BackendConnectionPtr> others = lent_;
  for (Shard* shard : shards_) {
    check_server(shard->primary);
    for (auto& replica : shard->replicas) check_server(replica);
    for (auto& [profile, idle] : shard->idle)
      others.insert(others.end(), idle.begin(), idle.end());  // an EXEC may still be in flight
  }
  for (auto& connection : others) connection->check_deadlines(now);
  close_answered(retired_, now);
}

std::optional<std::string> ConnectionPool::down_reason(std::size_t shard) const {
  const auto& connection = *shards_[shard]->primary.shared.front();
  if (!connection.ejected()) return std::nullopt;
  return connection.down_reason();
}

std::vector<ConnectionPool::ServerState> ConnectionPool::servers(std::size_t shard) const {
  std::vector<ServerState> out;
  bool bounded = config_->replica_max_lag.count() > 0;
  auto describe = [&out, bounded](const Server& server, bool replica) {
    const BackendConnection& connection = *server.shared.front();
    std::size_t in_flight = 0;
    for (const auto& c : server.shared) in_flight += c->in_flight();
    out.push_back({server.name,
                   server.address.text(),
                   replica,
                   connection.state(),
                   connection.ejected(),
                   connection.down_reason(),
                   in_flight,
                   true,
                   -1,
                   {}});
    if (server.freshness) {
      out.back().fresh = server.freshness->fresh(bounded);
      out.back().lag_ms = server.freshness->lag_ms.load(std::memory_order_relaxed);
      out.back().sync = server.freshness->why();
    }
  };
  const Shard& entry = *shards_[shard];
  describe(entry.primary, false);
  for (const auto& replica : entry.replicas) describe(replica, true);
  return out;
}

}  // namespace santral::router
