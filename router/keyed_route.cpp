#include <fmt/format.h>

#include "config/shard_map.h"
#include "protocol/errors.h"
#include "protocol/key_extraction.h"
#include "protocol/resp_writer.h"
#include "router/client_session.h"
#include "router/routing.h"
#include "router/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

void forward_whole(const Routed& routed, std::size_t shard) {
  if (!routed.request.inline_form) return routed.session.forward(shard, routed.request.raw);
  std::string& bytes = routed.session.scratch();
  bytes.clear();
  protocol::RespWriter(bytes).command(routed.request.args);
  routed.session.forward(shard, bytes);
}

void route_keyed(const Routed& routed) {
  auto& session = routed.session;
  const auto& args = routed.request.args;
  const auto& map = session.worker().shard_map();
  auto& positions = session.key_positions();
  if (!protocol::find_keys(routed.spec, args, positions))
    return session.reply_error(error_message(ClientError::NoKeysFound, routed.spec.name));
  // A command with no key in this call (EVAL with numkeys 0) runs on the first shard, so the
  // same keyless call always meets the same server.
  if (positions.empty()) return forward_whole(routed, 0);

  std::size_t shard = map.shard_for_key(args[positions.front()]);
  for (std::size_t i = 1; i < positions.size(); ++i) {
    std::size_t other = map.shard_for_key(args[positions[i]]);
    if (other == shard) continue;
    auto first = args[positions.front()].substr(0, 64);
    auto second = args[positions[i]].substr(0, 64);
    return session.reply_error(error_message(
        ClientError::CrossShard,
        fmt::format("'{}' is on shard '{}', '{}' on shard '{}'", first, map.shard(shard).name,
                    second, map.shard(other).name)));
  }
  forward_whole(routed, shard);
}

void route_channel(const Routed& routed) {
  const auto& map = routed.session.worker().shard_map();
  forward_whole(routed, map.shard_for_key(routed.request.args[1]));
}

// Prefers a shard whose connection is up, so a keyless question is not failed by one dead shard.
void route_any(const Routed& routed) {
  auto& session = routed.session;
  auto& worker = session.worker();
  std::size_t shards = worker.shard_map().shard_count();
  for (std::size_t i = 0; i < shards; ++i) {
    if (worker.backend(i, session.state().id).state() == BackendConnection::State::Up)
      return forward_whole(routed, i);
  }
  forward_whole(routed, 0);
}

}  // namespace santral::router
