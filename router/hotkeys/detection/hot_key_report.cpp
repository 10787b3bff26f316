#include "router/hotkeys/detection/hot_key_report.h"

#include "router/hotkeys/near_cache/near_cache.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/process/fan_out.h"
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
  fan_out<std::vector<HotKeyRate>, Worker>(
      home, workers, worker_rates,
      [done = std::move(done)](std::vector<std::vector<HotKeyRate>> per_worker) {
        std::vector<HotKeyRate> total;
        for (auto& rates : per_worker) merge_rates(total, std::move(rates));
        done(std::move(total));
      });
}

}  // namespace santral::router
