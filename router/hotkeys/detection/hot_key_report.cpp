#include "router/hotkeys/detection/hot_key_report.h"

#include <memory>

#include <boost/asio/post.hpp>

#include "router/hotkeys/near_cache/near_cache.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/process/worker.h"

namespace santral::router {

namespace {

std::vector<HotKeyRate> worker_rates(Worker& worker) {
  auto rates = worker.hotkeys().rates(std::chrono::steady_clock::now());
  const auto& map = worker.shard_map();
  for (auto& rate : rates) {
    const SaltedCounter* counter = worker.salts().find(rate.key);
    rate.salts = counter != nullptr ? counter->salts : 0;
    rate.cached = worker.near_cache().contains(rate.key);
    if (counter != nullptr) rate.salted_by = counter->salted_by;
    rate.shard =
        map.shard(counter != nullptr ? counter->shards[0] : map.shard_for_key(rate.key)).name;
  }
  return rates;
}

}  // namespace

void collect_hot_keys(const std::vector<Worker*>& workers, boost::asio::io_context& home,
                      std::function<void(std::vector<HotKeyRate>)> done) {
  struct Pending {
    std::vector<HotKeyRate> total;
    std::size_t left;
    std::function<void(std::vector<HotKeyRate>)> done;
  };
  auto pending = std::make_shared<Pending>(Pending{{}, workers.size(), std::move(done)});
  if (workers.empty()) return boost::asio::post(home, [pending] { pending->done({}); });
  for (Worker* worker : workers) {
    boost::asio::post(worker->io(), [worker, pending, &home] {
      boost::asio::post(home, [pending, rates = worker_rates(*worker)]() mutable {
        merge_rates(pending->total, std::move(rates));
        if (--pending->left == 0) pending->done(std::move(pending->total));
      });
    });
  }
}

}  // namespace santral::router
