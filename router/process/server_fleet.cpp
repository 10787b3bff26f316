// The server's side of a fleet (`cluster:`, router/process/fleet_sync.h): a reload applies the
// file's own settings here and proposes its map to the fleet.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "config/config_error.h"
#include "config/shared_map.h"
#include "protocol/errors.h"
#include "router/process/server.h"
#include "router/routes/in_flight_fence.h"
#include "router/runtime/fan_out.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

namespace asio = boost::asio;

std::optional<FleetAgent::View> Server::fleet_view() const {
  if (!fleet_) return std::nullopt;
  return fleet_->view();
}

void Server::put_in_force(config::TopologyPtr topology) {
  if (fleet_) fleet_->agent().use_shards(shards_of(*topology));
  post_to_each<Worker>(worker_list(), [topology](Worker& worker) { worker.apply(topology); });
  topology_ = std::move(topology);
  shared_.topology_version = topology_->version;
  spdlog::set_level(spdlog::level::from_str(topology_->config->log_level));
}

void Server::fence_all(std::function<void()> done) {
  fence_workers(io_, worker_list(), {}, nullptr, std::move(done));
}

// A reload in a fleet: the file's own settings apply here at once; its map, when it has
// changed since this router last read it, is proposed as the fleet's next version.
void Server::reload_in_fleet(std::string why, std::function<void(ReloadResult)> done) {
  auto finish = [&](ReloadResult result) {
    remember_reload(why, result);
    if (done) done(std::move(result));
  };
  config::Config next;
  std::string text;
  std::string file_map;
  try {
    text = source_.read_text();
    last_read_text_ = text;
    next = source_.parse(text);
    if (config::has_shard_map(next)) file_map = config::shared_map_text(text, source_.path);
  } catch (const config::ConfigError& e) {
    spdlog::error("reload ({}) rejected, still serving version {}: {}", why, topology_->map_version,
                  e.what());
    return finish({false, e.what()});
  }
  auto tls = make_tls_contexts(next);
  if (!tls.contexts) {
    spdlog::error("reload ({}) rejected, still serving version {}: {}: {}", why,
                  topology_->map_version, next.source.string(), tls.error);
    return finish({false, next.source.string() + ": " + tls.error});
  }
  if (driver_->state() != ReshardState::Idle || topology_->move)
    return finish({false, fmt::format("a move is under way (SANTRAL RESHARD STATUS); reload once "
                                      "it has ended, or ABORT it first")});
  auto kept = keep_restart_settings(*topology_->config, next);
  config::adopt_shared_map(next, *topology_->config);  // the fleet's map stays in force
  put_tls_in_force(tls.contexts);
  auto topology =
      std::make_shared<config::Topology>(*config::make_topology(std::move(next), next_version()));
  topology->map_version = topology_->map_version;
  topology->salt_naming = topology_->salt_naming;
  put_in_force(topology);
  std::string message = "this router's own settings reloaded";
  if (!kept.empty())
    message += fmt::format(" (needs a restart to change: {})", fmt::join(kept, ", "));
  spdlog::info("reloaded {} ({}): {}", source_.path.string(), why, message);
  bool news = fleet_->file_map_is_new(file_map);
  if (!news)
    return finish({true, fmt::format("{}; the file's map is not new: the fleet's version {} stays "
                                     "(santral map push FILE proposes a map)",
                                     message, topology_->map_version)});
  fleet_->propose_map(file_map,
                      [this, why, message, done = std::move(done)](const ReloadResult& proposed) {
                        ReloadResult result{proposed.ok, message + "; " + proposed.message};
                        remember_reload(why, result);
                        if (done) done(std::move(result));
                      });
}

void Server::push_map(std::string text, std::function<void(ReloadResult)> done) {
  if (fleet_) return fleet_->push_map(std::move(text), std::move(done));
  asio::post(io_, [done = std::move(done)] {
    done({false, protocol::error_message(protocol::ClientError::NotInFleet)});
  });
}

void Server::share_salting(SaltChange change, std::function<void(std::string)> done) {
  salting_.share(std::move(change), std::move(done));
}

}  // namespace santral::router
