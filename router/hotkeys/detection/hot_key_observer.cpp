#include "router/hotkeys/detection/hot_key_observer.h"

#include "router/hotkeys/detection/hot_key_detector.h"
#include "router/hotkeys/salting/salted_route.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

void observe_hot_key(const Routed& routed) {
  if (routed.plan.keys.empty()) return;
  auto& worker = routed.client.worker();
  // Automatic salting folds back in the default database only: a counter used in another one
  // is never a candidate.
  bool counter = counter_command(routed.spec) &&
                 routed.client.state().database == worker.config().backend.database;
  worker.hotkeys().record(routed.request.args[routed.plan.keys.front().position],
                          routed.spec.has(protocol::kWrite), counter);
}

}  // namespace santral::router
