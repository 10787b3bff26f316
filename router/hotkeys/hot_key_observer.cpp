#include "router/hotkeys/hot_key_observer.h"

#include "protocol/key_extraction.h"
#include "router/client_session.h"
#include "router/hotkeys/hot_key_detector.h"
#include "router/hotkeys/salted_route.h"
#include "router/worker.h"

namespace santral::router {

void observe_hot_key(const Routed& routed) {
  auto& positions = routed.session.key_positions();
  if (!protocol::find_keys(routed.spec, routed.request.args, positions) || positions.empty())
    return;
  routed.session.worker().hotkeys().record(routed.request.args[positions.front()],
                                           routed.spec.has(protocol::kWrite),
                                           counter_command(routed.spec.name));
}

}  // namespace santral::router
