#include "router/hotkeys/salting/salting_barrier.h"

#include <limits>
#include <utility>

#include "router/routes/in_flight_barrier.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

void barrier_salting(WorkerServices& origin, const std::vector<std::size_t>& shards,
                     std::function<void()> done) {
  // barrier_workers reads "no shards" as all of them; a change that touches none (no shard
  // index is this large) waits for nothing but still makes every worker take it.
  auto behind = shards.empty() ? std::vector{std::numeric_limits<std::size_t>::max()} : shards;
  barrier_workers(
      origin.io(), origin.peers(), std::move(behind),
      [](WorkerServices& worker) { worker.refresh_salts(); }, std::move(done));
}

}  // namespace santral::router
