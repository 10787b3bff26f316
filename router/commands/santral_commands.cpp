#include "router/commands/santral_commands.h"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <mutex>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// Answered once the server has reloaded: +OK with what changed, or the config error. The
// server's thread gets only a handle; the session is touched back on this worker (fan_out.h).
void santral_reload(const Routed& routed) {
  auto& session = routed.session;
  auto slot = session.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&session);
  session.worker().shared().control->reload(
      client_actor(session.state()),
      answer_on<ControlPlane::ReloadResult>(
          session.worker().io(), [keep, slot](const ControlPlane::ReloadResult& result) {
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
  auto& worker = routed.session.worker();
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
        fmt::format_to(std::back_inserter(text), " sentinel_master:{}", shard.sentinel_master);
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
  }
  text += topology.map->describe();
  std::string out;
  protocol::RespWriter(out).bulk(text);
  routed.session.reply(out);
}

}  // namespace santral::router
