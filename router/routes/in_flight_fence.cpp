#include "router/routes/in_flight_fence.h"

#include <algorithm>
#include <utility>

#include "router/backend/reply_sink.h"
#include "router/routes/staged_writes.h"
#include "router/runtime/worker_services.h"
#include "router/tracking/tracking_lanes.h"

namespace santral::router {

namespace {

// Counts the PINGs of one worker's fence back in.
class FenceSink final : public ReplySink {
 public:
  FenceSink(std::size_t pings, std::function<void()> done) : left_(pings), done_(std::move(done)) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view /*reply*/) override {
    if (left_ > 0 && --left_ == 0) std::exchange(done_, nullptr)();
  }

 private:
  std::size_t left_;
  std::function<void()> done_;
};

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

// Whether a PING down `connection` is needed: it may carry something sent before now. A
// connection still connecting with nothing queued carries nothing yet; a stopped one carries
// nothing any more.
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

void fence_one(WorkerServices& worker, const std::vector<std::size_t>& shards,
               std::function<void()> done) {
  // The connections are collected when the staged writes have ended, not before: an idle
  // connection collected earlier may be lent to a MULTI meanwhile, and a PING sent then would
  // land inside the transaction.
  after_staged_writes([&worker, shards, done = std::move(done)]() mutable {
    std::vector<BackendConnectionPtr> connections;
    std::size_t count = worker.shard_map().shard_count();
    if (shards.empty()) {
      connections = worker.pool().fence_connections(std::nullopt);
    } else {
      for (std::size_t shard : shards) {
        if (shard >= count) continue;
        auto more = worker.pool().fence_connections(shard);
        connections.insert(connections.end(), more.begin(), more.end());
      }
    }
    // A tracking client's lanes carry all its commands; lanes are few, so all are waited out.
    bool any = shards.empty() || std::any_of(shards.begin(), shards.end(),
                                             [count](std::size_t s) { return s < count; });
    if (any) {
      auto lanes = worker.lanes().fence_connections();
      connections.insert(connections.end(), lanes.begin(), lanes.end());
    }
    std::sort(connections.begin(), connections.end());
    connections.erase(std::unique(connections.begin(), connections.end()), connections.end());
    std::erase_if(connections, [](const BackendConnectionPtr& c) { return !may_carry(*c); });
    if (connections.empty()) return done();
    boost::intrusive_ptr<FenceSink> sink(new FenceSink(connections.size(), std::move(done)));
    for (auto& connection : connections) connection->send(kPing, sink, 0, 0);
  });
}
}  // namespace santral::router
