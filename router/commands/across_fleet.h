#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/intrusive_ptr.hpp>

#include "protocol/reply_value.h"
#include "router/routes/routing.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// What one other router of the fleet answered: its reply's frame, or why there is none.
struct RouterPart {
  std::string router;  // its name (SANTRAL ROUTERS)
  std::string frame;   // the whole RESP reply; empty when `error` says why
  std::string error;   // "no answer within 3 s", "cannot connect: ..."
};

// A router's part as what `want` it is (an array, an integer, a bulk, OK), parsed into `value`
// (whose text points into `part.frame`); else why it is not, to name the router by: its
// `error`, "its reply is not RESP", the error it answered, or "an unexpected reply".
std::string part_error(const RouterPart& part, protocol::ReplyValue& value,
                       protocol::ReplyValue::Type want);

// Sends `command` to every other live router of the fleet, from this worker's loop, and calls
// `done` there with one part per router asked (none outside a fleet). Each router is given the
// connect and request timeouts (`timeouts:`) to answer; one that does not is a part with an
// error, never left out.
void ask_other_routers(WorkerServices& worker, const std::vector<std::string>& command,
                       std::function<void(std::vector<RouterPart>)> done);

// This router's name in its fleet's views ("" outside a fleet): CLIENT LIST's `router=`.
std::string fleet_router_name(WorkerServices& worker);

// Answers the current request once `collect` has run on every worker of this router and every
// other router of the fleet has answered `command` (CLIENT LIST/KILL, SLOWLOG): the local
// parts and the routers' parts go to `answer`. Outside a fleet it is across_workers.h's.
template <typename T>
void across_fleet(const Routed& routed, std::function<T(WorkerServices&)> collect,
                  std::vector<std::string> command,
                  std::function<std::string(std::vector<T>, std::vector<RouterPart>)> answer) {
  auto& client = routed.client;
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  auto& worker = client.worker();
  fan_out<T, WorkerServices>(
      worker.io(), worker.peers(), std::move(collect),
      [keep, slot, command = std::move(command),
       answer = std::move(answer)](std::vector<T> local) mutable {
        auto held = std::make_shared<std::vector<T>>(std::move(local));
        ask_other_routers(
            keep->worker(), command,
            [keep, slot, held, answer = std::move(answer)](std::vector<RouterPart> routers) {
              keep->deliver(slot, 0, answer(std::move(*held), std::move(routers)));
            });
      });
}

}  // namespace santral::router
