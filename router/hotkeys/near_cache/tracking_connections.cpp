#include "router/hotkeys/near_cache/tracking_connections.h"

#include "protocol/reply_value.h"

namespace santral::router {

namespace {

using protocol::ReplyValue;

// Hears a tracking connection's pushes: `invalidate [keys]`, or `invalidate` with null when
// the server flushed its data; and the loss of the connection.
class InvalidationSink final : public ReplySink {
 public:
  explicit InvalidationSink(NearCache& cache) : cache_(&cache) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*shard*/, std::string_view frame) override {
    ReplyValue push;
    if (!protocol::parse_reply(frame, push) || push.elements.size() < 2 ||
        push.elements[0].text != "invalidate")
      return;
    const ReplyValue& keys = push.elements[1];
    if (keys.type == ReplyValue::Type::Null) return cache_->invalidate_all();
    for (const auto& key : keys.elements) cache_->invalidate(key.text);
  }
  void connection_lost(std::size_t shard) override { cache_->invalidate_shard(shard); }

 private:
  NearCache* cache_;
};

}  // namespace

TrackingConnections::TrackingConnections(boost::asio::io_context& io, WorkerStats& stats,
                                         NearCache& cache)
    : io_(io), stats_(stats), invalidations_(new InvalidationSink(cache)) {}

TrackingConnections::~TrackingConnections() {
  stop();
}

void TrackingConnections::apply(const placement::Topology& topology) {
  for (auto& connection : connections_) retired_.push_back(std::move(connection));
  connections_.clear();
  const auto& map = *topology.map;
  if (!map.near_cache_anywhere()) return;
  // HELLO 3 makes invalidations arrive on the connection that read the key, in order with
  // its replies; the database is the clients' default one, the only one cached.
  ConnectionProfile profile{topology.config->backend.database, 3};
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    const auto& shard = map.shard(s);
    auto connection = BackendConnection::open(io_, {s, shard.name, shard.address, profile},
                                              topology.config, stats_.shards[shard.name],
                                              {ConnectionRole::Tracking, invalidations_, {}});
    connections_.push_back(std::move(connection));
  }
}

void TrackingConnections::stop() {
  auto all = std::move(connections_);
  all.insert(all.end(), retired_.begin(), retired_.end());
  connections_.clear();
  retired_.clear();
  for (auto& connection : all) connection->stop();
}

void TrackingConnections::check_deadlines(std::chrono::steady_clock::time_point now) {
  for (auto& connection : connections_) connection->check_deadlines(now);
  close_answered(retired_, now);
}

BackendConnection* TrackingConnections::ready(std::size_t shard) const {
  if (shard >= connections_.size()) return nullptr;
  BackendConnection* connection = connections_[shard].get();
  // Not while its handshake is unanswered: if the shard refuses tracking, the fills queued
  // behind it would fail with the shard's error instead of going the usual way.
  return connection->up() && !connection->handshaking() ? connection : nullptr;
}

}  // namespace santral::router
