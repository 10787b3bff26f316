// Commands about the whole dataset: sent to every shard and merged (DBSIZE, KEYS, FLUSHDB,
// SCRIPT LOAD, INFO...), except SCAN, which visits one shard per call.
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/client_session.h"
#include "router/info_sections.h"
#include "router/merge/merge_plan.h"
#include "router/routing.h"
#include "router/scan_cursor.h"
#include "router/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

MergePlan plan_for(const Routed& routed) {
  const auto& map = routed.session.worker().shard_map();
  MergePlan plan;
  plan.kind = routed.spec.merge;
  plan.command = upper_name(routed.spec);
  plan.protocol = routed.session.state().protocol;
  for (std::size_t s = 0; s < map.shard_count(); ++s)
    plan.fragment_names.push_back(map.shard(s).name);
  return plan;
}

void send_to_every_shard(const Routed& routed, MergePlan plan, std::string_view bytes) {
  auto& session = routed.session;
  auto shards = static_cast<std::uint32_t>(plan.fragment_names.size());
  auto slot = session.open_slot(shards, make_merge(std::move(plan)));
  for (std::uint32_t s = 0; s < shards; ++s) session.backend(s).send(bytes, &session, slot, s);
}

// SCAN <cursor> [MATCH p] [COUNT n] [TYPE t]: the cursor names a shard and a place in it; the
// call goes to that shard alone with that shard's own cursor.
void route_scan(const Routed& routed) {
  auto& session = routed.session;
  auto shards = static_cast<std::uint32_t>(session.worker().shard_map().shard_count());
  auto position = decode_scan_cursor(routed.request.args[1], shards);
  if (!position) return session.reply_error(error_message(ClientError::InvalidCursor));
  std::vector<std::string_view> args(routed.request.args.begin(), routed.request.args.end());
  std::string cursor = std::to_string(position->shard_cursor);
  args[1] = cursor;
  std::string& bytes = session.scratch();
  bytes.clear();
  protocol::RespWriter(bytes).command(args);

  MergePlan plan;
  plan.kind = protocol::Merge::Scan;
  plan.command = "SCAN";
  plan.protocol = session.state().protocol;
  plan.fragment_names.push_back(session.worker().shard_map().shard(position->shard).name);
  plan.scan_shard = position->shard;
  plan.scan_shards = shards;
  auto slot = session.open_slot(1, make_merge(std::move(plan)));
  session.backend(position->shard).send(bytes, &session, slot, 0);
}

// INFO [section ...]: the shards' sections merged, Santral's own section added. "santral" and
// "shards" are Santral's sections; the shards are asked for the others.
void route_info(const Routed& routed) {
  auto& session = routed.session;
  InfoRequest wanted = parse_info_request(routed.request.args);
  MergePlan plan = plan_for(routed);
  plan.info.shards_section = wanted.shards;
  if (wanted.santral) plan.info.local_sections = santral_info_section(session.worker());
  plan.info.overrides.emplace_back(
      "connected_clients", std::to_string(session.worker().shared().connected_clients.load()));
  if (wanted.only_santral) {
    std::string out;
    protocol::RespWriter(out).bulk(plan.info.local_sections);
    return session.reply(out);
  }
  std::vector<std::string_view> args = {"INFO"};
  for (const auto& section : wanted.backend_sections) args.push_back(section);
  std::string bytes;
  protocol::RespWriter(bytes).command(args);
  send_to_every_shard(routed, std::move(plan), bytes);
}

}  // namespace

void route_broadcast(const Routed& routed) {
  switch (routed.spec.merge) {
    case protocol::Merge::Scan:
      return route_scan(routed);
    case protocol::Merge::Info:
      return route_info(routed);
    default:
      break;
  }
  if (routed.spec.script == protocol::ScriptArg::Body)
    routed.session.worker().remember_script(routed.request.args[2]);  // SCRIPT LOAD <body>
  send_to_every_shard(routed, plan_for(routed), request_bytes(routed));
}

}  // namespace santral::router
