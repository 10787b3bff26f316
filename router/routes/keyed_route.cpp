#include <strings.h>
#include <cctype>

#include <fmt/format.h>

#include "config/shard_map.h"
#include "protocol/errors.h"
#include "protocol/key_extraction.h"
#include "protocol/resp_writer.h"
#include "router/session/client_session.h"
#include "router/routes/routing.h"
#include "router/routes/scripts.h"
#include "router/process/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

std::string upper_name(const protocol::CommandSpec& spec) {
  std::string name(spec.name);
  for (auto& c : name)
    c = c == '|' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::string_view request_bytes(const Routed& routed) {
  if (!routed.request.inline_form) return routed.request.raw;
  std::string& bytes = routed.session.scratch();
  bytes.clear();
  protocol::RespWriter(bytes).command(routed.request.args);
  return bytes;
}

void forward_whole(const Routed& routed, std::size_t shard) {
  routed.session.forward(shard, request_bytes(routed));
}

std::optional<std::size_t> single_shard(const Routed& routed) {
  auto& session = routed.session;
  const auto& args = routed.request.args;
  const auto& map = session.worker().shard_map();
  auto& positions = session.key_positions();
  if (!protocol::find_keys(routed.spec, args, positions)) {
    session.reply_error(error_message(ClientError::NoKeysFound, routed.spec.name));
    return std::nullopt;
  }
  if (positions.empty()) return 0;
  std::size_t shard = map.shard_for_key(args[positions.front()]);
  if (routed.spec.has(protocol::kReadonly))
    session.read_from(map.read_from_of(args[positions.front()]));
  for (std::size_t i = 1; i < positions.size(); ++i) {
    std::size_t other = map.shard_for_key(args[positions[i]]);
    if (other == shard) continue;
    session.reply_error(
        error_message(ClientError::CrossShard,
                      fmt::format("'{}' is on shard '{}', '{}' on shard '{}'",
                                  args[positions.front()].substr(0, 64), map.shard(shard).name,
                                  args[positions[i]].substr(0, 64), map.shard(other).name)));
    return std::nullopt;
  }
  return shard;
}

namespace {

// XREAD and XREADGROUP block only when given BLOCK; without it they are plain reads.
bool has_block_option(const Routed& routed) {
  for (std::string_view arg : routed.request.args)
    if (arg.size() == 5 && ::strncasecmp(arg.data(), "BLOCK", 5) == 0) return true;
  return false;
}

}  // namespace

void route_keyed(const Routed& routed) {
  if (routed.spec.has(protocol::kBlocking) && has_block_option(routed))
    return route_blocking(routed);
  auto shard = single_shard(routed);
  if (!shard) return;
  switch (routed.spec.script) {
    case protocol::ScriptArg::Body:
      routed.session.worker().remember_script(routed.request.args[1]);
      break;
    case protocol::ScriptArg::Sha:
      if (forward_evalsha(routed, *shard)) return;
      break;
    case protocol::ScriptArg::None:
      break;
  }
  forward_whole(routed, *shard);
}

void route_channel(const Routed& routed) {
  const auto& map = routed.session.worker().shard_map();
  forward_whole(routed, map.shard_for_key(routed.request.args[1]));
}

// Prefers a shard whose connection is up, so a keyless question is not failed by one dead shard.
std::size_t any_shard(const Routed& routed) {
  auto& session = routed.session;
  std::size_t shards = session.worker().shard_map().shard_count();
  for (std::size_t i = 0; i < shards; ++i) {
    const auto& connection = session.shared_backend(i);
    if (connection.state() == BackendConnection::State::Up && !connection.ejected()) return i;
  }
  return 0;
}

void route_any(const Routed& routed) {
  forward_whole(routed, any_shard(routed));
}

}  // namespace santral::router
