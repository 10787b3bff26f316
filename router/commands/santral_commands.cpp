#include "router/commands/santral_commands.h"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <mutex>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// Answered once the server has reloaded: +OK with what changed, or the config error. The
// server's thread gets only a handle; the client is touched back on this worker (fan_out.h).
void santral_reload(const Routed& routed) {
  auto& client = routed.client;
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  client.worker().shared().control->reload(
      client_actor(client.state()),
      answer_on<ControlPlane::ReloadResult>(
          client.worker().io(), [keep, slot](const ControlPlane::ReloadResult& result) {
            std::string message = protocol::one_line(result.message);
            std::string reply;
            if (result.ok) {
              protocol::RespWriter(reply).simple("OK " + message);
            } else {
              protocol::RespWriter(reply).error(
                  protocol::error_message(protocol::ClientError::ReloadRejected, message));
            }
            keep->deliver(slot, 0, reply);
          }));
}

void santral_shardmap(const Routed& routed) {
  auto& worker = routed.client.worker();
  const auto& topology = worker.topology();
  const auto& config = *topology.config;
  std::string text = fmt::format("version:{}\nhash:{}\ndistribution:{}\nhash_tag:{}\n",
                                 topology.shown_version(), config.hash_name,
                                 config::distribution_name(config.distribution), config.hash_tag);
  for (std::size_t s = 0; s < topology.map->shard_count(); ++s) {
    const auto& shard = topology.map->shard(s);
    for (const auto& server : worker.pool().servers(s)) {
      fmt::format_to(std::back_inserter(text), "shard:{} role:{} address:{} weight:{} state:{}",
                     shard.name, server.replica ? "replica" : "primary", server.address,
                     shard.weight, server.state_name());
      // A replica: whether it gets reads (router/backend/replica_freshness.h).
      if (server.replica)
        fmt::format_to(std::back_inserter(text), " reads:{} lag_ms:{}", server.fresh ? "yes" : "no",
                       server.lag_ms);
      else if (!shard.sentinel_master.empty())
        // And the replication offset a failover's new primary must reach (-1: not read yet).
        fmt::format_to(std::back_inserter(text), " sentinel_master:{} read_offset:{}",
                       shard.sentinel_master,
                       worker.shared().primary_readings.last(server.address).offset);
      text += '\n';
    }
  }
  {
    auto& shared = worker.shared();
    std::lock_guard guard(shared.failover_lock);
    // The latest of every shard's last.
    auto last = std::max_element(
        shared.failovers.begin(), shared.failovers.end(),
        [](const auto& a, const auto& b) { return a.second.unix_time < b.second.unix_time; });
    if (last != shared.failovers.end())
      text += fmt::format("last_failover:{:%Y-%m-%dT%H:%M:%SZ} shard:{} from:{} to:{}\n",
                          fmt::gmtime(static_cast<std::time_t>(last->second.unix_time)),
                          last->first, last->second.from, last->second.to);
    // Each shard's last failover that lost writes (router/process/sentinel_failover.h).
    for (std::size_t s = 0; s < topology.map->shard_count(); ++s) {
      const auto& name = topology.map->shard(s).name;
      auto lost = shared.lost_writes.find(name);
      if (lost == shared.lost_writes.end()) continue;
      const auto& report = lost->second;
      text += fmt::format(
          "lost_writes:{:%Y-%m-%dT%H:%M:%SZ} shard:{} from:{} to:{} lineage:{} writes:{} "
          "why:{}{}\n",
          fmt::gmtime(static_cast<std::time_t>(report.failover.unix_time)), name,
          report.failover.from, report.failover.to, lineage_name(report.verdict.lineage),
          report.writes_name(), report.verdict.why,
          report.writes == LostWrites::Writes::Refused
              ? fmt::format("; SANTRAL FAILOVER ACCEPT {} lets writes go", name)
              : "");
    }
  }
  text += topology.map->describe();
  std::string out;
  protocol::RespWriter(out).bulk(text);
  routed.client.reply(out);
}

// SANTRAL FAILOVER ACCEPT <shard>: asked of the server's thread, which tells every worker
// before it answers here.
void santral_failover(const Routed& routed) {
  auto& client = routed.client;
  const auto& args = routed.request.args;
  if (args.size() != 4 || !protocol::equals_nocase(args[2], "ACCEPT"))
    return client.reply_error(protocol::error_message(protocol::ClientError::FailoverSyntax));
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  client.worker().shared().control->accept_failover(
      std::string(args[3]), client_actor(client.state()),
      answer_on<ControlPlane::FailoverAnswer>(
          client.worker().io(), [keep, slot](const ControlPlane::FailoverAnswer& answer) {
            std::string reply;
            if (answer.error.empty())
              protocol::RespWriter(reply).simple("OK " + protocol::one_line(answer.said));
            else
              protocol::RespWriter(reply).error(answer.error);
            keep->deliver(slot, 0, reply);
          }));
}

}  // namespace santral::router
