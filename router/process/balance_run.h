#pragma once

#include <functional>

#include "router/runtime/control_plane.h"

namespace santral::router {

class Server;

// SANTRAL BALANCE PLAN on the server's thread: counts Santral's requests to each shard over
// the request's window, samples every shard's keys and sizes meanwhile, adds the hot keys'
// own rates, and hands the balancer's plan (router/balance/, config/balance/) to `done`, on
// the server's thread.
void run_balance(Server& server, ControlPlane::BalanceRequest request,
                 std::function<void(ControlPlane::BalanceAnswer)> done);

}  // namespace santral::router
