#pragma once

#include <functional>

#include "router/runtime/control_plane.h"

namespace santral::router {

class Server;

// SANTRAL ANALYZE on the server's thread: every worker samples one request in 1/rate for the
// request's seconds while the shards' keys are drawn (RANDOMKEY, MEMORY USAGE) and, in a fleet,
// every other live router samples its own requests (SANTRAL ANALYZE ... RAW, asked over the
// routers' own port); then the samples are analyzed (router/analysis/) and `done` runs on the
// server's thread. One analysis at a time per router.
void run_analysis(Server& server, ControlPlane::AnalyzeRequest request,
                  std::function<void(ControlPlane::AnalyzeAnswer)> done);

}  // namespace santral::router
