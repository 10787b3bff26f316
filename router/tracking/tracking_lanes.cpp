#include "router/tracking/tracking_lanes.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "protocol/resp_writer.h"

namespace santral::router {

using protocol::ReplyValue;

std::string invalidation_push(std::string_view key) {
  return fmt::format(">2\r\n$10\r\ninvalidate\r\n*1\r\n${}\r\n{}\r\n", key.size(), key);
}

std::string invalidation_push(std::span<const std::string_view> keys) {
  std::string out = fmt::format(">2\r\n$10\r\ninvalidate\r\n*{}\r\n", keys.size());
  for (auto key : keys) fmt::format_to(std::back_inserter(out), "${}\r\n{}\r\n", key.size(), key);
  return out;
}

std::string_view null_invalidation_push() {
  return ">2\r\n$10\r\ninvalidate\r\n_\r\n";
}

namespace {

// Hears one lane's (or broadcast connection's) pushes and its loss.
class LaneSink final : public ReplySink {
 public:
  // The lanes outlive it: a connection's sink is cleared before the lanes let it go.
  LaneSink(TrackingLanes& lanes, TrackingLanes::LaneId id) : lanes_(lanes), id_(id) {}
  void deliver(std::uint64_t /*slot*/, std::uint32_t /*shard*/, std::string_view frame) override {
    lanes_.pushed(id_, frame);
  }
  void connection_lost(std::size_t /*shard*/) override { lanes_.lost(id_); }

 private:
  TrackingLanes& lanes_;
  TrackingLanes::LaneId id_;
};

// Hears the PINGs sent after a BCAST NOLOOP client's write on every broadcast connection, and
// then lets go of the write's keys.
class OwnWriteBarrier final : public ReplySink {
 public:
  OwnWriteBarrier(OwnWrites& own_writes, std::uint64_t client, std::vector<std::string> keys,
                  std::size_t pings)
      : own_writes_(own_writes),
        client_(client),
        keys_(std::move(keys)),
        pings_(pings),
        generation_(own_writes.generation()) {}
  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view /*reply*/) override {
    if (pings_ > 0 && --pings_ == 0) own_writes_.heard(client_, keys_, generation_);
  }

 private:
  OwnWrites& own_writes_;  // the lanes' own: they stop their connections before they go
  std::uint64_t client_;
  std::vector<std::string> keys_;
  std::size_t pings_;
  std::uint64_t generation_;
};

// Registers a client for the keys of a queued read once the lane has answered their EXISTS.
class QueuedReadProbe final : public ReplySink {
 public:
  QueuedReadProbe(TrackingLanes& lanes, std::uint64_t client, std::vector<std::string> keys,
                  std::uint64_t epoch)
      : lanes_(lanes), client_(client), keys_(std::move(keys)), epoch_(epoch) {}
  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view /*reply*/) override {
    for (const auto& key : keys_) lanes_.read_arrived(client_, key, epoch_);
  }

 private:
  TrackingLanes& lanes_;  // outlives its connections' sinks, as LaneSink
  std::uint64_t client_;
  std::vector<std::string> keys_;
  std::uint64_t epoch_;
};

bool is_invalidation(const ReplyValue& push) {
  return push.elements.size() >= 2 && push.elements[0].text == "invalidate";
}

}  // namespace

TrackingLanes::TrackingLanes(boost::asio::io_context& io, WorkerStats& stats,
                             FindTrackingClient find_client)
    : io_(io), stats_(stats), find_client_(std::move(find_client)) {}

TrackingLanes::~TrackingLanes() {
  stop();
}

void TrackingLanes::apply(placement::TopologyPtr topology) {
  for (auto& [id, lane] : lanes_) {
    tell_everyone(lane, id.broadcast);
    lane.connection->set_push_sink(nullptr);
    retired_.push_back(std::move(lane.connection));
  }
  lanes_.clear();
  ++epoch_;
  keys_.clear();
  own_writes_.clear();
  keys_.set_max_keys(topology->config->limits.tracking_table_max_keys);
  topology_ = std::move(topology);
  auto broadcast = std::move(broadcast_clients_);
  broadcast_clients_.clear();
  for (auto [client, database] : broadcast)
    if (find_client_(client) != nullptr) broadcast_to(client, database);
}

void TrackingLanes::stop() {
  std::vector<BackendConnectionPtr> all = std::move(retired_);
  retired_.clear();
  for (auto& [id, lane] : lanes_) all.push_back(std::move(lane.connection));
  lanes_.clear();
  for (auto& connection : all) {
    connection->set_push_sink(nullptr);
    connection->stop();
  }
}

std::vector<BackendConnectionPtr> TrackingLanes::barrier_connections() const {
  std::vector<BackendConnectionPtr> all = retired_;
  for (const auto& [id, lane] : lanes_) all.push_back(lane.connection);
  return all;
}

void TrackingLanes::check_deadlines(std::chrono::steady_clock::time_point now) {
  for (auto& [id, lane] : lanes_) lane.connection->check_deadlines(now);
  close_answered(retired_, now);
}

TrackingLanes::Lane& TrackingLanes::open(const LaneId& id) {
  auto found = lanes_.find(id);
  if (found != lanes_.end()) return found->second;
  const auto& shard = topology_->map->shard(id.shard);
  Lane& lane = lanes_[id];
  // RESP3, so that invalidations come on the lane itself, in order with its replies.
  lane.connection = BackendConnection::open(
      io_, {id.shard, shard.name, shard.address, ConnectionProfile{id.database, 3}},
      topology_->config, stats_.shards[shard.name],
      {id.broadcast ? ConnectionRole::TrackingBroadcast : ConnectionRole::Tracking,
       ReplySinkPtr(new LaneSink(*this, id)),
       {}});
  return lane;
}

BackendConnection& TrackingLanes::lane(std::size_t shard, int database, std::uint64_t client) {
  Lane& lane = open({shard, database, false});
  lane.clients.insert(client);
  return *lane.connection;
}

std::vector<BackendConnection*> TrackingLanes::broadcast_to(std::uint64_t client, int database) {
  broadcast_clients_[client] = database;
  std::vector<BackendConnection*> connections;
  connections.reserve(topology_->map->shard_count());
  for (std::size_t s = 0; s < topology_->map->shard_count(); ++s) {
    Lane& lane = open({s, database, true});
    lane.clients.insert(client);
    connections.push_back(lane.connection.get());
  }
  return connections;
}

std::vector<BackendConnection*> TrackingLanes::pushing_to(std::uint64_t client) const {
  std::vector<BackendConnection*> connections;
  for (const auto& [id, lane] : lanes_)
    if (lane.clients.contains(client)) connections.push_back(lane.connection.get());
  return connections;
}

void TrackingLanes::forget_client(std::uint64_t client) {
  for (auto& [id, lane] : lanes_) lane.clients.erase(client);
  broadcast_clients_.erase(client);
  own_writes_.forget(client);
  flushed_.erase(client);
}

void TrackingLanes::track_queued_read(std::size_t shard, int database, std::uint64_t client,
                                      std::vector<std::string> keys) {
  std::vector<std::string_view> args{"EXISTS"};
  for (const auto& key : keys) args.emplace_back(key);
  std::string bytes;
  protocol::RespWriter(bytes).command(args);
  BackendConnection& connection = lane(shard, database, client);
  connection.send(bytes, ReplySinkPtr(new QueuedReadProbe(*this, client, std::move(keys), epoch_)),
                  0, 0);
}

void TrackingLanes::own_write_answered(std::uint64_t client, int database,
                                       std::vector<std::string> keys) {
  std::vector<BackendConnection*> connections;
  for (auto& [id, lane] : lanes_)
    if (id.broadcast && id.database == database) connections.push_back(lane.connection.get());
  ReplySinkPtr barrier(
      new OwnWriteBarrier(own_writes_, client, std::move(keys), connections.size()));
  if (connections.empty()) return barrier->deliver(0, 0, {});
  for (auto* connection : connections) connection->send("*1\r\n$4\r\nPING\r\n", barrier, 0, 0);
}

void TrackingLanes::read_arrived(std::uint64_t client, std::string_view key, std::uint64_t epoch) {
  flushed_.erase(client);
  if (epoch != epoch_) {  // read on a lane that is gone: nobody will hear of the key's writes
    tell(client, invalidation_push(key), false);
    return;
  }
  for (auto& [dropped, clients] : keys_.add(key, client)) {
    std::string push = invalidation_push(dropped);
    for (std::uint64_t other : clients) tell(other, push, false);
  }
}

// A client that turned tracking off (or to BCAST) since hears nothing of keys it read.
void TrackingLanes::tell(std::uint64_t client, std::string_view push, bool broadcast_only) {
  TrackingClient* found = find_client_(client);
  if (found == nullptr) return;
  const auto& settings = found->tracking_settings();
  if (!settings.on) return;
  bool broadcast = settings.mode == TrackingSettings::Mode::Broadcast;
  if (broadcast != broadcast_only) return;
  found->invalidate(push);
}

// Over copies: a client told may close (past limits.max_output_bytes) and leave the lists. A
// client of the tracking lanes told already, with no read registered since, has nothing cached
// to drop (a BCAST client reads off the lanes' books: it is told each time).
void TrackingLanes::tell_everyone(const Lane& lane, bool broadcast) {
  std::vector<std::uint64_t> clients(lane.clients.begin(), lane.clients.end());
  for (std::uint64_t client : clients) {
    if (!broadcast && !flushed_.insert(client).second) continue;
    tell(client, null_invalidation_push(), broadcast);
  }
}

void TrackingLanes::pushed(const LaneId& id, std::string_view frame) {
  ReplyValue push;
  if (!protocol::parse_reply(frame, push) || !is_invalidation(push)) return;
  const ReplyValue& keys = push.elements[1];
  if (keys.type == ReplyValue::Type::Null) {  // FLUSHALL, FLUSHDB
    auto found = lanes_.find(id);
    if (found != lanes_.end()) tell_everyone(found->second, id.broadcast);
    // The table keeps the keys other lanes' clients read: they were not told.
    return;
  }
  if (id.broadcast) return broadcast_keys(keys.elements);
  invalidate_keys(keys.elements);
}

void TrackingLanes::invalidate_keys(std::span<const ReplyValue> keys) {
  for (const auto& key : keys) {
    auto clients = keys_.take(key.text);
    if (clients.empty()) continue;
    std::string push = invalidation_push(key.text);
    for (std::uint64_t client : clients) tell(client, push, false);
  }
}

// As Redis tells a BCAST client: one push per prefix of the client (in byte order) with the
// keys of this push (one event loop's writes on the shard) that start with it.
void TrackingLanes::broadcast_keys(std::span<const ReplyValue> keys) {
  std::vector<std::uint64_t> clients;
  clients.reserve(broadcast_clients_.size());
  for (auto [client, database] : broadcast_clients_) clients.push_back(client);
  std::vector<std::string_view> matching;
  std::vector<char> skipped;
  for (std::uint64_t client : clients) {
    TrackingClient* found = find_client_(client);
    if (found == nullptr || !found->tracking_settings().on ||
        found->tracking_settings().mode != TrackingSettings::Mode::Broadcast) {
      broadcast_clients_.erase(client);  // gone, or no longer BCAST
      continue;
    }
    // NOLOOP: the push of the client's own write of a key is skipped, once per write.
    bool noloop = found->tracking_settings().noloop && !own_writes_.empty();
    skipped.assign(keys.size(), 0);
    if (noloop)
      for (std::size_t i = 0; i < keys.size(); ++i)
        skipped[i] = own_writes_.take(client, keys[i].text) ? 1 : 0;
    std::vector<std::string> prefixes = found->tracking_settings().prefixes;
    if (prefixes.empty()) prefixes.emplace_back();
    std::sort(prefixes.begin(), prefixes.end());
    for (const auto& prefix : prefixes) {
      matching.clear();
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (skipped[i] == 0 && std::string_view(keys[i].text).starts_with(prefix))
          matching.push_back(keys[i].text);
      // The client may close when told (past limits.max_output_bytes): find it again.
      if (!matching.empty() && (found = find_client_(client)) != nullptr)
        found->invalidate(invalidation_push(matching));
    }
  }
}

void TrackingLanes::lost(const LaneId& id) {
  auto found = lanes_.find(id);
  if (found == lanes_.end()) return;
  tell_everyone(found->second, id.broadcast);
  if (id.broadcast) own_writes_.clear();
  // Those still tracking register again with their next reads on the reconnected lane.
  found->second.clients.clear();
  if (id.broadcast)
    for (auto [client, database] : broadcast_clients_)
      if (database == id.database) found->second.clients.insert(client);
}

}  // namespace santral::router
