#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "router/status/router_record.h"

namespace santral::router {

// The fleet as this router last read it from etcd (router/cluster/fleet_agent.h reads it), for
// SANTRAL ROUTERS and GET /routers.
struct FleetView {
  std::vector<RouterRecord> routers;
  bool in_touch = false;
  std::string member;      // the etcd member that answered last
  std::string last_error;  // when not in touch
  std::int64_t lease = 0;
  double silent_ms = 0;  // since etcd last answered
  // Routers whose registration went away without their saying they leave (a lease that
  // expired), less than a lease plus a margin ago: they may still believe they serve.
  std::vector<RouterRecord> departed;
};

}  // namespace santral::router
