#include "router/commands/santral_commands.h"

#include <iterator>

#include <fmt/format.h>

#include "protocol/resp_writer.h"
#include "router/process/control_plane.h"
#include "router/process/fan_out.h"
#include "router/process/worker.h"
#include "router/session/client_session.h"

namespace santral::router {

// Answered once the server has reloaded: +OK with what changed, or the config error. The
// server's thread gets only a handle; the session is touched back on this worker (fan_out.h).
void santral_reload(const Routed& routed) {
  auto& session = routed.session;
  auto slot = session.open_slot();
  boost::intrusive_ptr<ClientSession> keep(&session);
  session.worker().shared().control->reload(answer_on<ControlPlane::ReloadResult>(
      session.worker().io(), [keep, slot](const ControlPlane::ReloadResult& result) {
        std::string message = result.message;
        for (auto& c : message)
          if (c == '\r' || c == '\n') c = ' ';
        std::string reply =
            (result.ok ? "+OK " : "-ERR santral: reload rejected, the old config keeps serving: ") +
            message + "\r\n";
        keep->deliver(slot, 0, reply);
      }));
}

void santral_shardmap(const Routed& routed) {
  auto& worker = routed.session.worker();
  const auto& topology = worker.topology();
  const auto& config = *topology.config;
  const char* distribution = config.distribution == config::Distribution::Ketama   ? "ketama"
                             : config.distribution == config::Distribution::Modula ? "modula"
                                                                                   : "random";
  std::string text = fmt::format("version:{}\nhash:{}\ndistribution:{}\nhash_tag:{}\n",
                                 topology.version, config.hash_name, distribution, config.hash_tag);
  for (std::size_t s = 0; s < topology.map->shard_count(); ++s) {
    const auto& shard = topology.map->shard(s);
    for (const auto& server : worker.pool().servers(s)) {
      const char* state = server.ejected                                         ? "down"
                          : server.state == BackendConnection::State::Up         ? "up"
                          : server.state == BackendConnection::State::Connecting ? "connecting"
                                                                                 : "down";
      fmt::format_to(std::back_inserter(text), "shard:{} role:{} address:{} weight:{} state:{}\n",
                     shard.name, server.replica ? "replica" : "primary", server.address,
                     shard.weight, state);
    }
  }
  text += topology.map->describe();
  std::string out;
  protocol::RespWriter(out).bulk(text);
  routed.session.reply(out);
}

}  // namespace santral::router
