#include "router/process/fence.h"

#include <utility>

#include "router/backend/reply_sink.h"
#include "router/process/fan_out.h"
#include "router/process/worker.h"

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

// On `worker`'s thread.
void fence_one(Worker& worker, const std::vector<std::size_t>& shards, std::function<void()> done) {
  std::vector<BackendConnectionPtr> connections;
  auto add = [&](std::size_t shard) {
    auto more = worker.pool().shared_connections(shard);
    connections.insert(connections.end(), more.begin(), more.end());
  };
  std::size_t count = worker.shard_map().shard_count();
  if (shards.empty()) {
    for (std::size_t shard = 0; shard < count; ++shard) add(shard);
  } else {
    for (std::size_t shard : shards)
      if (shard < count) add(shard);
  }
  if (connections.empty()) return done();
  boost::intrusive_ptr<FenceSink> sink(new FenceSink(connections.size(), std::move(done)));
  for (auto& connection : connections) connection->send(kPing, sink, 0, 0);
}

}  // namespace

void fence_workers(boost::asio::io_context& origin, const std::vector<Worker*>& workers,
                   std::vector<std::size_t> shards, std::function<void(Worker&)> first,
                   std::function<void()> done) {
  struct Fenced {};
  fan_out_async<Fenced, Worker>(
      origin, workers,
      [shards = std::move(shards), first = std::move(first)](Worker& worker,
                                                             FanOutAnswer<Fenced> answer) {
        if (first) first(worker);
        fence_one(worker, shards, [answer = std::move(answer)] { answer(Fenced{}); });
      },
      [done = std::move(done)](const std::vector<Fenced>&) { done(); });
}

}  // namespace santral::router
