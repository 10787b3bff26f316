#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/backend/backend_connection.h"
#include "router/routes/routing.h"
#include "router/routes/scripts.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

std::string_view request_bytes(const Routed& routed) {
  if (!routed.request.inline_form) return routed.request.raw;
  std::string& bytes = routed.client.scratch();
  bytes.clear();
  protocol::RespWriter(bytes).command(routed.request.args);
  return bytes;
}

void forward_whole(const Routed& routed, std::size_t shard) {
  routed.client.forward(shard, request_bytes(routed));
}

void route_single_shard(const Routed& routed) {
  std::size_t shard = *routed.plan.shard;
  switch (routed.spec.script) {
    case protocol::ScriptArg::Body:
      routed.client.worker().remember_script(routed.request.args[1]);
      break;
    case protocol::ScriptArg::Sha:
      if (forward_evalsha(routed, shard)) return;
      break;
    case protocol::ScriptArg::None:
    case protocol::ScriptArg::Flush:  // SCRIPT FLUSH is broadcast, never keyed
      break;
  }
  forward_whole(routed, shard);
}

// Prefers a shard whose connection is up, so a keyless question is not failed by one dead shard.
std::size_t any_shard(RequestContext& client) {
  std::size_t shards = client.worker().shard_map().shard_count();
  for (std::size_t i = 0; i < shards; ++i) {
    const auto& connection = client.shared_backend(i);
    if (connection.up()) return i;
  }
  return 0;
}

void route_any(const Routed& routed) {
  forward_whole(routed, any_shard(routed.client));
}

}  // namespace santral::router
