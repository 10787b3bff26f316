#include "router/hotkeys/salting/salt_fence.h"

#include <limits>
#include <utility>

#include "router/routes/in_flight_fence.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

void fence_salting(WorkerServices& origin, const std::vector<std::size_t>& shards,
                   std::function<void()> done) {
  // fence_workers reads "no shards" as all of them; a change that touches none (no shard
  // index is this large) fences nothing but still makes every worker take it.
  auto fenced = shards.empty() ? std::vector{std::numeric_limits<std::size_t>::max()} : shards;
  fence_workers(
      origin.io(), origin.peers(), std::move(fenced),
      [](WorkerServices& worker) { worker.refresh_salts(); }, std::move(done));
}

}  // namespace santral::router
