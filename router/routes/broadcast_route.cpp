// Commands about the whole dataset: sent to every shard and merged (DBSIZE, KEYS, FLUSHDB,
// SCRIPT LOAD, INFO...), except SCAN, which visits one shard per call.
#include <strings.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/merge/merge_brief.h"
#include "router/merge/scan_cursor.h"
#include "router/routes/info_sections.h"
#include "router/routes/lent_replies.h"
#include "router/routes/routing.h"
#include "router/routes/script_cache.h"
#include "router/runtime/request_context.h"
#include "router/runtime/scripts_in_flight.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

MergeBrief brief_for(const Routed& routed, const std::vector<std::size_t>& shards) {
  const auto& map = routed.client.worker().shard_map();
  MergeBrief brief;
  brief.kind = routed.spec.merge;
  brief.command = upper_name(routed.spec);
  brief.protocol = routed.client.state().protocol;
  for (std::size_t s : shards) brief.fragment_names.push_back(map.shard(s).name);
  return brief;
}

void send_to_shards(const Routed& routed, MergeBrief brief, std::string_view bytes,
                    const std::vector<std::size_t>& shards) {
  auto& client = routed.client;
  auto slot =
      client.open_slot(static_cast<std::uint32_t>(shards.size()), make_merge(std::move(brief)));
  for (std::uint32_t f = 0; f < shards.size(); ++f)
    client.backend(shards[f]).send(bytes, &client, slot, f);
}

// SCAN <cursor> [MATCH p] [COUNT n] [TYPE t]: the cursor names a shard and a place in it; the
// call goes to that shard alone with that shard's own cursor. Shards a MATCH pattern rules out
// are skipped: a cursor that moves on to one of them moves on to the next shard that can match.
void route_scan(const Routed& routed) {
  auto& client = routed.client;
  const auto& map = client.worker().shard_map();
  auto shards = static_cast<std::uint32_t>(map.shard_count());
  auto position = decode_scan_cursor(routed.request.args[1], shards);
  if (!position) return client.reply_error(error_message(ClientError::InvalidCursor));
  if (position->shard_cursor == 0) {
    const auto& targets = routed.plan.shards;
    auto next = std::lower_bound(targets.begin(), targets.end(), position->shard);
    if (next == targets.end()) return client.reply("*2\r\n$1\r\n0\r\n*0\r\n");  // done
    position->shard = static_cast<std::uint32_t>(*next);
  }
  std::vector<std::string_view> args(routed.request.args.begin(), routed.request.args.end());
  std::string cursor = std::to_string(position->shard_cursor);
  args[1] = cursor;
  std::string& bytes = client.scratch();
  bytes.clear();
  protocol::RespWriter(bytes).command(args);

  MergeBrief brief;
  brief.kind = protocol::Merge::Scan;
  brief.command = "SCAN";
  brief.protocol = client.state().protocol;
  brief.fragment_names.push_back(map.shard(position->shard).name);
  brief.scan_shard = position->shard;
  brief.scan_shards = shards;
  auto slot = client.open_slot(1, make_merge(std::move(brief)));
  client.backend(position->shard).send(bytes, &client, slot, 0);
}

// The request to each of `shards` over a connection lent for it (not behind the shared
// connections' queues, where a busy script holds them), each given up to timeouts.script.
void send_over_lent_connections(const Routed& routed, MergeBrief brief,
                                const std::vector<std::size_t>& shards) {
  auto& client = routed.client;
  auto slot =
      client.open_slot(static_cast<std::uint32_t>(shards.size()), make_merge(std::move(brief)));
  boost::intrusive_ptr<LentReplies> replies(new LentReplies(client, slot, shards.size()));
  std::string bytes(request_bytes(routed));
  for (std::uint32_t f = 0; f < shards.size(); ++f) {
    auto connection = client.worker().pool().lend(shards[f], client.profile());
    replies->lent(connection);
    connection->send_within(bytes, replies, slot, f, client.worker().config().timeouts.script);
  }
}

// SCRIPT KILL and FUNCTION KILL: to every shard, each over a connection lent for the call, so
// that it reaches a shard busy with a script at once, as another client reaches Redis (the
// shared connections wait behind the script one of them carries). OK if any shard had one.
// A shard heeds it once the script has run busy-reply-threshold, as on Redis.
void route_kill(const Routed& routed) {
  const auto& shards = routed.plan.shards;
  // A shard reads other clients' commands only once the script has run busy-reply-threshold
  // (5 s by default): the KILL waits as long as the script may, as on Redis.
  send_over_lent_connections(routed, brief_for(routed, shards), shards);
}

// "shards" are Santral's sections; the shards are asked for the others.
void route_info(const Routed& routed) {
  auto& client = routed.client;
  InfoRequest wanted = parse_info_request(routed.request.args);
  const std::vector<std::size_t>& shards = routed.plan.shards;
  MergeBrief brief = brief_for(routed, shards);
  brief.info.shards_section = wanted.shards;
  if (wanted.santral) brief.info.local_sections = santral_info_section(client.worker());
  brief.info.overrides.emplace_back(
      "connected_clients", std::to_string(client.worker().shared().connected_clients.load()));
  // Scripts, not scripts times shards: the ones Santral has seen.
  brief.info.overrides.emplace_back("number_of_cached_scripts",
                                    std::to_string(client.worker().scripts().size()));
  // The lowest version the shards run (router/catalog/), as HELLO says; and a Redis Cluster
  // node's own words when the cluster endpoint is on.
  if (const auto& lowest = client.worker().learned().lowest_version(); !lowest.empty())
    brief.info.overrides.emplace_back("redis_version", lowest);
  if (client.worker().config().cluster_endpoint) {
    brief.info.overrides.emplace_back("redis_mode", "cluster");
    brief.info.overrides.emplace_back("cluster_enabled", "1");
  }
  if (wanted.only_santral) {
    std::string out;
    protocol::RespWriter(out).bulk(brief.info.local_sections);
    return client.reply(out);
  }
  std::vector<std::string_view> args = {"INFO"};
  for (const auto& section : wanted.backend_sections) args.push_back(section);
  std::string bytes;
  protocol::RespWriter(bytes).command(args);
  send_to_shards(routed, std::move(brief), bytes, shards);
}

}  // namespace

// A script shorter than this does not make PING ask the shards: a PING costs nothing then.
constexpr std::chrono::milliseconds kScriptMayBeBusy{50};

bool route_ping_past_scripts(const Routed& routed) {
  auto& client = routed.client;
  auto& scripts = scripts_in_flight();
  if (!scripts.any()) return false;
  auto busy = scripts.running_since(ScriptsInFlight::Clock::now() - kScriptMayBeBusy);
  const auto& map = client.worker().shard_map();
  std::vector<std::size_t> shards;
  for (std::size_t s = 0; s < map.shard_count(); ++s)
    if (std::find(busy.begin(), busy.end(), map.shard(s).name) != busy.end()) shards.push_back(s);
  if (shards.empty()) return false;
  MergeBrief brief = brief_for(routed, shards);
  brief.kind = protocol::Merge::AllOk;
  send_over_lent_connections(routed, std::move(brief), shards);
  return true;
}

void route_broadcast(const Routed& routed) {
  switch (routed.spec.merge) {
    case protocol::Merge::Scan:
      return route_scan(routed);
    case protocol::Merge::Info:
      return route_info(routed);
    case protocol::Merge::AnyOk:
      return route_kill(routed);
    default:
      break;
  }
  if (routed.spec.script == protocol::ScriptArg::Body)
    routed.client.worker().remember_script(routed.request.args[2]);  // SCRIPT LOAD <body>
  if (routed.spec.script == protocol::ScriptArg::Flush)
    routed.client.worker().forget_scripts();  // a later EVALSHA gets NOSCRIPT, as from Redis
  const auto& shards = routed.plan.shards;
  if (shards.empty()) return routed.client.reply("*0\r\n");  // the pattern can match no key
  send_to_shards(routed, brief_for(routed, shards), request_bytes(routed), shards);
}

}  // namespace santral::router
