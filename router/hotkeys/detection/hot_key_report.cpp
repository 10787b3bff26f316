#include "router/hotkeys/detection/hot_key_report.h"

#include <string>
#include <unordered_set>

#include "router/hotkeys/near_cache/near_cache.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

// One worker's rates; with `every_salted`, each salted counter it knows of is there too.
std::vector<HotKeyRate> worker_rates(WorkerServices& worker, bool every_salted) {
  auto rates = worker.hotkeys().rates(std::chrono::steady_clock::now());
  if (every_salted) {
    std::unordered_set<std::string> listed;
    for (const auto& rate : rates) listed.insert(rate.key);
    for (auto& key : worker.salts().salted_keys()) {
      if (listed.contains(key)) continue;
      HotKeyRate idle;
      idle.key = std::move(key);
      rates.push_back(std::move(idle));
    }
  }
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

void collect(const std::vector<WorkerServices*>& workers, boost::asio::io_context& home,
             bool every_salted, std::function<void(std::vector<HotKeyRate>)> done) {
  fan_out<std::vector<HotKeyRate>, WorkerServices>(
      home, workers,
      [every_salted](WorkerServices& worker) { return worker_rates(worker, every_salted); },
      [done = std::move(done)](std::vector<std::vector<HotKeyRate>> per_worker) {
        std::vector<HotKeyRate> total;
        for (auto& rates : per_worker) merge_rates(total, std::move(rates));
        done(std::move(total));
      });
}

}  // namespace

void collect_hot_keys(const std::vector<WorkerServices*>& workers, boost::asio::io_context& home,
                      std::function<void(std::vector<HotKeyRate>)> done) {
  collect(workers, home, false, std::move(done));
}

void list_hot_keys(const std::vector<WorkerServices*>& workers, boost::asio::io_context& home,
                   std::size_t count, std::function<void(std::vector<HotKeyRate>)> done) {
  collect(workers, home, true, [count, done = std::move(done)](std::vector<HotKeyRate> rates) {
    done(hottest_and_salted(std::move(rates), count));
  });
}

std::vector<HotKeyRate> hottest_and_salted(std::vector<HotKeyRate> rates, std::size_t count) {
  std::vector<HotKeyRate> kept;
  for (std::size_t i = 0; i < rates.size(); ++i)
    if (i < count || rates[i].salts > 0) kept.push_back(std::move(rates[i]));
  return kept;
}

}  // namespace santral::router
