#include "router/routes/in_flight_barrier.h"

#include <algorithm>
#include <utility>

#include "protocol/reply_scanner.h"
#include "router/backend/draining_connections.h"
#include "router/backend/reply_sink.h"
#include "router/routes/staged_writes.h"
#include "router/runtime/worker_services.h"
#include "router/tracking/tracking_lanes.h"

namespace santral::router {

namespace {

// Counts one worker's barrier back in: each connection's PING, and the connections given up on
// before (draining_connections.h). A PING answered by the shard proves that everything sent
// before it on its connection has run; a PING that failed proves nothing, so its connection's
// drain (registered before the failure was delivered) is waited for instead.
class BarrierSink final : public ReplySink {
 public:
  BarrierSink(std::vector<BackendConnectionPtr> pinged, std::function<void()> done)
      : pinged_(std::move(pinged)), left_(pinged_.size() + 1), done_(std::move(done)) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t fragment, std::string_view reply) override {
    if (!protocol::is_error_frame(reply) || fragment >= pinged_.size()) return count_down();
    const auto& connection = *pinged_[fragment];
    DrainingConnections::of(connection.io())
        .after(connection.target().address.text(),
               [self = boost::intrusive_ptr<BarrierSink>(this)] { self->count_down(); });
  }

  // The "+1": what was draining before the barrier began.
  void count_down() {
    if (left_ > 0 && --left_ == 0) std::exchange(done_, nullptr)();
  }

 private:
  std::vector<BackendConnectionPtr> pinged_;  // by fragment
  std::size_t left_;
  std::function<void()> done_;
};

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

// Whether a PING down `connection` is needed: it may carry something sent before now. A
// connection still connecting with nothing queued carries nothing yet; a stopped or down one
// carries nothing any more (what it gave up on is draining instead).
bool may_carry(const BackendConnection& connection) {
  switch (connection.state()) {
    case BackendConnection::State::Up:
      return true;
    case BackendConnection::State::Connecting:
      return connection.in_flight() > 0;
    case BackendConnection::State::Down:
    case BackendConnection::State::Stopped:
      return false;
  }
  return false;
}

}  // namespace

void barrier_one(WorkerServices& worker, const std::vector<std::size_t>& shards,
                 std::function<void()> done) {
  // The connections are collected when the staged writes have ended, not before: an idle
  // connection collected earlier may be lent to a MULTI meanwhile, and a PING sent then would
  // land inside the transaction.
  after_staged_writes([&worker, shards, done = std::move(done)]() mutable {
    std::vector<BackendConnectionPtr> connections;
    std::vector<std::string> addresses;  // of the servers whose drains are waited for
    const auto& map = worker.shard_map();
    std::size_t count = map.shard_count();
    if (shards.empty()) {
      connections = worker.pool().barrier_connections(std::nullopt);
    } else {
      for (std::size_t shard : shards) {
        if (shard >= count) continue;
        addresses.push_back(map.shard(shard).address.text());
        auto more = worker.pool().barrier_connections(shard);
        connections.insert(connections.end(), more.begin(), more.end());
      }
    }
    // A tracking client's lanes carry all its commands; lanes are few, so all are waited out.
    bool any = shards.empty() || std::any_of(shards.begin(), shards.end(),
                                             [count](std::size_t s) { return s < count; });
    if (any) {
      auto lanes = worker.lanes().barrier_connections();
      connections.insert(connections.end(), lanes.begin(), lanes.end());
    }
    std::sort(connections.begin(), connections.end());
    connections.erase(std::unique(connections.begin(), connections.end()), connections.end());
    // Where connections given up on before now drain: every loop these live on.
    std::vector<boost::asio::io_context*> loops = {&worker.io()};
    for (const auto& connection : connections) {
      addresses.push_back(connection->target().address.text());
      if (std::find(loops.begin(), loops.end(), &connection->io()) == loops.end())
        loops.push_back(&connection->io());
    }
    std::erase_if(connections, [](const BackendConnectionPtr& c) { return !may_carry(*c); });
    boost::intrusive_ptr<BarrierSink> sink(new BarrierSink(connections, std::move(done)));
    for (std::uint32_t i = 0; i < connections.size(); ++i) connections[i]->send(kPing, sink, 0, i);
    // Connections given up on before now: every server's for a barrier of every shard, else
    // those of the servers of the barrier's shards.
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    std::size_t waits = loops.size() * (shards.empty() ? 1 : addresses.size());
    if (waits == 0) return sink->count_down();
    auto left = std::make_shared<std::size_t>(waits);
    auto before = [left, sink] {
      if (--*left == 0) sink->count_down();
    };
    for (auto* loop : loops) {
      auto& draining = DrainingConnections::of(*loop);
      if (shards.empty()) {
        draining.after_all(before);
        continue;
      }
      for (const auto& address : addresses) draining.after(address, before);
    }
  });
}
}  // namespace santral::router
