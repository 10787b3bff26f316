#include "router/commands/across_fleet.h"

#include <fmt/format.h>

#include "protocol/resp_writer.h"
#include "router/cluster/router_call.h"
#include "router/runtime/control_plane.h"
#include "router/status/router_record.h"

namespace santral::router {

std::string part_error(const RouterPart& part, protocol::ReplyValue& value,
                       protocol::ReplyValue::Type want) {
  if (!part.error.empty()) return part.error;
  if (!protocol::parse_reply(part.frame, value)) return "its reply is not RESP";
  if (value.is_error()) return std::string(value.text);
  if (value.type != want) return "an unexpected reply";
  return {};
}

std::string fleet_router_name(WorkerServices& worker) {
  if (worker.config().cluster.etcd.empty()) return {};
  return own_record(worker.config()).name;
}

void ask_other_routers(WorkerServices& worker, const std::vector<std::string>& command,
                       std::function<void(std::vector<RouterPart>)> done) {
  auto* control = worker.shared().control;
  auto view = control != nullptr ? control->fleet_view() : std::nullopt;
  const auto& config = worker.config();
  std::string own = fleet_router_name(worker);
  std::vector<std::pair<std::string, config::Endpoint>> asked;
  auto parts = std::make_shared<std::vector<RouterPart>>();
  if (view) {
    for (const auto& router : view->routers) {
      if (router.name == own || router.leaving) continue;
      const std::string& address = router.announce.empty() ? router.listen : router.announce;
      config::Endpoint endpoint;
      if (!config::parse_endpoint(address, endpoint)) {
        parts->push_back(
            {router.name, {}, fmt::format("its address '{}' is not host:port", address)});
        continue;
      }
      asked.emplace_back(router.name, endpoint);
    }
  }
  if (asked.empty()) return done(std::move(*parts));

  std::vector<std::string> requests;
  if (!config.password.empty()) {
    std::string auth;
    protocol::RespWriter(auth).command(std::vector<std::string_view>{"AUTH", config.password});
    requests.push_back(std::move(auth));
  }
  std::string bytes;
  protocol::RespWriter(bytes).command(
      std::vector<std::string_view>(command.begin(), command.end()));
  requests.push_back(std::move(bytes));

  auto timeout = config.timeouts.connect + config.timeouts.request;
  auto left = std::make_shared<std::size_t>(asked.size());
  auto finish = std::make_shared<std::function<void(std::vector<RouterPart>)>>(std::move(done));
  for (auto& [name, endpoint] : asked) {
    // Every answer comes back on this worker's loop: `parts` and `left` need no lock.
    call_router(worker.io(), endpoint, requests, timeout,
                [parts, left, finish, name = name](std::string frame, std::string error) {
                  parts->push_back({name, std::move(frame), std::move(error)});
                  if (--*left == 0) (*finish)(std::move(*parts));
                });
  }
}

}  // namespace santral::router
