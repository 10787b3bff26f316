#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <boost/intrusive_ptr.hpp>

#include "router/routes/routing.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// Answers the current request later, on this worker, once `collect` has run on every worker
// (CLIENT LIST, SLOWLOG). Only `collect`'s plain data goes to the other workers; the client
// stays here (fan_out.h).
template <typename T>
void across_workers(const Routed& routed, std::function<T(WorkerServices&)> collect,
                    std::function<std::string(std::vector<T>)> answer) {
  auto& client = routed.client;
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  auto& worker = client.worker();
  fan_out<T, WorkerServices>(worker.io(), worker.peers(), std::move(collect),
                             [keep, slot, answer = std::move(answer)](std::vector<T> results) {
                               keep->deliver(slot, 0, answer(std::move(results)));
                             });
}

}  // namespace santral::router
