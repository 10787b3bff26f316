// SANTRAL MAP PUSH and SANTRAL ROUTERS: a fleet of routers sharing one map (router/cluster/).
#include <string>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/commands/santral_commands.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// SANTRAL MAP PUSH <config text>: proposed through the server's thread, answered once etcd
// has taken it or refused it.
void santral_map(const Routed& routed) {
  auto& client = routed.client;
  const auto& args = routed.request.args;
  if (args.size() != 4 || !protocol::equals_nocase(args[2], "PUSH"))
    return client.reply_error(protocol::error_message(protocol::ClientError::MapPushSyntax));
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  client.worker().shared().control->push_map(
      std::string(args[3]), client_actor(client.state()),
      answer_on<ControlPlane::ReloadResult>(
          client.worker().io(), [keep, slot](const ControlPlane::ReloadResult& result) {
            std::string reply;
            if (result.ok) {
              protocol::RespWriter(reply).simple("OK " + protocol::one_line(result.message));
            } else {
              protocol::RespWriter(reply).error(protocol::one_line(result.message));
            }
            keep->deliver(slot, 0, reply);
          }));
}

// SANTRAL ROUTERS: one map per live router of the fleet, as this router last read etcd.
void santral_routers(const Routed& routed) {
  auto& client = routed.client;
  auto view = client.worker().shared().control->fleet_view();
  if (!view) return client.reply_error(protocol::error_message(protocol::ClientError::NotInFleet));
  std::string out;
  protocol::RespWriter writer(out, client.state().protocol);
  writer.array_header(view->routers.size());
  for (const auto& router : view->routers) {
    auto lease = std::to_string(router.lease);
    writer.fields({{"name", router.name},
                   {"listen", router.listen},
                   {"admin", router.admin},
                   {"map_version", static_cast<std::int64_t>(router.map_version)},
                   {"salting_version", static_cast<std::int64_t>(router.salting_version)},
                   {"lease", lease},
                   {"lease_ttl_s", static_cast<std::int64_t>(router.lease_ttl_s)},
                   {"started", router.started},
                   // cluster.fence: acl: its Redis user on the shards
                   {"fence_user", router.fence_user}});
  }
  client.reply(out);
}

}  // namespace santral::router
