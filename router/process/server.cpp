#include "router/process/server.h"

#include <unistd.h>

#include <fstream>
#include <iterator>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "config/config_error.h"
#include "config/placement_change.h"
#include "config/placement_diff.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/admin/admin_server.h"
#include "router/backend/sentinel_lookup.h"
#include "router/backend/write_fence.h"
#include "router/hotkeys/detection/hot_key_report.h"
#include "router/hotkeys/salting/salting_change.h"
#include "router/process/analyze_run.h"
#include "router/process/balance_run.h"
#include "router/resharding/moving_topology.h"
#include "router/routes/in_flight_fence.h"
#include "router/runtime/fan_out.h"
#include "router/transport/tls_contexts.h"
#include "santral/version.h"

namespace santral::router {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr auto kWatchPeriod = std::chrono::seconds(1);

void log_topology(const config::Config& config) {
  spdlog::info(
      "santral {} listening on {} with {} worker{}; {} shard{} ({} distribution, {} hash{})",
      kVersion, ClientListeners::describe(config), config.workers, config.workers == 1 ? "" : "s",
      config.shards.size(), config.shards.size() == 1 ? "" : "s",
      config::distribution_name(config.distribution), config.hash_name,
      config.hash_tag.empty() ? "" : ", hash tag \"" + config.hash_tag + "\"");
  for (const auto& shard : config.shards)
    spdlog::info("  shard '{}' at {} (weight {}{})", shard.name, shard.address.text(), shard.weight,
                 shard.replicas.empty() ? "" : fmt::format(", {} replicas", shard.replicas.size()));
}

}  // namespace

Server::Server(ConfigSource source, config::Config config, FleetStart fleet)
    : source_(std::move(source)),
      topology_(config::make_topology(std::move(config), 1)),
      listeners_(io_, shared_, workers_, topology_),
      signals_(io_, SIGINT, SIGTERM, SIGHUP),
      watch_timer_(io_),
      drain_timer_(io_),
      salting_(io_, shared_, workers_, topology_, fleet.agent.get()),
      sentinel_(io_, *this, shared_) {
  shared_.control = this;
  if (fleet.agent) {
    fleet_ = std::make_unique<FleetSync>(io_, static_cast<RouterHost&>(*this), shared_, fleet);
    topology_ = fleet_->first_topology(topology_);
  }
  if (fleet_ && fleet.salting) {
    // The fleet's run-time salting outlives any one router: it is taken before serving.
    auto decoded = decode_salt_overrides(fleet.salting->key, fleet.salting->value);
    if (decoded.overrides)
      shared_.salt_overrides = decoded.overrides;
    else
      spdlog::error("fleet: refusing the run-time salting in etcd: {}", decoded.error);
    fleet_->agent().acknowledge_salting(fleet.salting->mod_revision);
  }
  if (fleet_) fleet_->agent().acknowledge(static_cast<std::int64_t>(topology_->map_version));
  try {
    last_read_text_ = source_.read_text();
  } catch (const config::ConfigError&) {
  }
  MoveHost& host = *this;
  if (fleet_) {
    driver_ =
        std::make_unique<MoveDriver>(io_, host, fleet_->ledger(), fleet_->agent().router_name());
    fleet_->set_driver(*driver_);
  } else {
    local_ = std::make_unique<LocalLedger>(source_.path, topology_->config->resharding.state_file);
    driver_ = std::make_unique<MoveDriver>(io_, host, *local_, "santral");
    local_->on_change([this](const std::optional<LedgerMove>& move) { driver_->take(move); });
    auto start = restore_local_moves(*local_, *this, topology_, source_.path);
    topology_ = start.topology;
    kept_move_ = std::move(start.kept_move);
    planned_at_start_ = std::move(start.planned);
    start_error_ = std::move(start.error);
    if (start.file_in_force) local_->set_in_force_text(last_read_text_);
  }
  sentinel_.set_driver(*driver_);
  for (unsigned i = 0; i < topology_->config->workers; ++i)
    workers_.push_back(std::make_unique<Worker>(i, topology_, shared_));
  std::vector<Worker*> peers;
  for (auto& worker : workers_) peers.push_back(worker.get());
  for (auto& worker : workers_) worker->set_peers(peers);
}

Server::~Server() {
  for (auto& worker : workers_) worker->stop();
}

int Server::run() {
  if (!start_error_.empty()) {
    spdlog::critical("{}", start_error_);
    return 1;
  }
  const auto& config = *topology_->config;
  auto tls = make_tls_contexts(config);
  if (!tls.contexts) {
    spdlog::critical("{}: {}", config.source.string(), tls.error);
    return 1;
  }
  put_tls_in_force(tls.contexts);
  if (auto refused = config::admin_exposure_error(config.admin)) {
    spdlog::critical("admin.listen {}: {}", config.admin.listen.text(), *refused);
    return 1;
  }
  if (!listeners_.open(config)) return 1;
  if (config.admin.listen.port != 0) {
    admin_ = std::make_unique<AdminServer>(io_, *this);
    if (auto error = admin_->listen(config.admin); !error.empty()) {
      spdlog::critical("cannot start the admin API on {}: {}", config.admin.listen.text(), error);
      return 1;
    }
  }

  for (const auto& warning : config.warnings)
    spdlog::warn("{}: {}", config.source.string(), warning);
  log_topology(config);
  if (admin_) spdlog::info("admin API on http://{}/", config.admin.listen.text());

  for (auto& worker : workers_) worker->start();
  if (local_)
    asio::post(io_, [this] {
      driver_->coordinate(true);  // alone, it drives its moves itself
      if (kept_move_) driver_->take(std::exchange(kept_move_, std::nullopt));
      if (auto to = std::exchange(planned_at_start_, nullptr))
        driver_->plan(to, last_read_text_, [](bool ok, const std::string& message) {
          if (ok)
            spdlog::info("resharding: {}", message);
          else
            spdlog::error("resharding: the file's map was not planned as a move: {}", message);
        });
    });
  if (fleet_) {
    shared_.fleet_serve_until_ns = 0;  // until the lease is confirmed
    set_write_fence(&shared_.fleet_serve_until_ns);
    fleet_->start([this](const EtcdKeyValue& salting) { salting_.take_fleet_salting(salting); },
                  [this] { salting_.check_waiters(); });
  }
  sentinel_.watch(*topology_->config);
  wait_for_signals();
  watch_file();
  salting_.start();
  listeners_.start();
  io_.run();
  for (auto& worker : workers_) worker->stop();
  if (fleet_) {
    fleet_->stop();  // leaves the fleet: the others see it go at once
    set_write_fence(nullptr);
  }
  spdlog::info("santral stopped");
  return 0;
}

void Server::wait_for_signals() {
  signals_.async_wait([this](boost::system::error_code error, int signal) {
    if (error) return;
    if (signal == SIGHUP) {
      start_reload("SIGHUP", nullptr);
    } else if (shutting_down_) {
      spdlog::warn("second {}: exiting at once", signal == SIGINT ? "SIGINT" : "SIGTERM");
      std::_Exit(1);
    } else {
      begin_shutdown(signal);
    }
    wait_for_signals();
  });
}

// Stops accepting, then lets every worker answer what its clients already sent; exits when
// all are done or when drain_ms has passed.
void Server::begin_shutdown(int signal) {
  shutting_down_ = true;
  sentinel_.stop();
  auto drain = topology_->config->drain;
  spdlog::info(
      "received {}: no new clients; answering what was already sent (up to {} ms); "
      "send it again to exit at once",
      signal == SIGINT ? "SIGINT" : "SIGTERM", drain.count());
  boost::system::error_code ignored;
  listeners_.close();
  watch_timer_.cancel();
  salting_.stop();
  if (admin_) admin_->close();
  for (auto& worker : workers_) {
    Worker* w = worker.get();
    asio::post(w->io(), [this, w] {
      w->drain([this] {
        asio::post(io_, [this] {
          // In a fleet the run-time salting is the fleet's, and outlives this router.
          if (++drained_workers_ == workers_.size()) {
            if (fleet_)
              finish_shutdown();
            else
              salting_.fold([this] { finish_shutdown(); });
          }
        });
      });
    });
  }
  drain_timer_.expires_after(drain);
  drain_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    spdlog::warn("drain_ms passed with clients still waiting for replies; closing them");
    finish_shutdown();
  });
}

void Server::finish_shutdown() {
  drain_timer_.cancel();
  signals_.cancel();
  io_.stop();
}

std::vector<Worker*> Server::worker_list() const {
  return pointers_to<Worker>(workers_);
}

std::vector<WorkerServices*> Server::worker_services() const {
  return pointers_to<WorkerServices>(workers_);
}

void Server::switch_topology(config::TopologyPtr topology, std::function<void()> done) {
  if (fleet_) fleet_->agent().use_shards(shards_of(*topology));
  topology_ = topology;
  shared_.topology_version = topology->version;
  fence_workers(
      io_, worker_list(), {}, [topology](Worker& worker) { worker.apply(topology); },
      std::move(done));
}

void Server::release_pulls() {
  post_to_each<Worker>(worker_list(), [](Worker& worker) { worker.release_moves(); });
}

std::shared_ptr<config::Topology> Server::topology_of(const std::string& text, std::string& error) {
  if (fleet_) return fleet_->topology_of(text, error);
  try {
    return std::make_shared<config::Topology>(*config::make_topology(source_.parse(text), 0));
  } catch (const config::ConfigError& e) {
    error = e.what();
    return nullptr;
  }
}

void Server::reshard(ReshardVerb verb, std::function<void(ReshardAnswer)> done) {
  asio::post(io_, [this, verb, done = std::move(done)]() mutable {
    auto answer = [this, done = std::move(done)](const std::string& error) {
      done({error, driver_->status()});
    };
    if (verb == ReshardVerb::Approve) return driver_->approve(std::move(answer));
    if (verb == ReshardVerb::Abort) return driver_->abort(std::move(answer));
    answer({});
  });
}

void Server::balance(BalanceRequest request, std::function<void(BalanceAnswer)> done) {
  asio::post(io_, [this, request = std::move(request), done = std::move(done)]() mutable {
    // A plan is measured on the map in force, and carried out as the next move.
    auto state = driver_->state();
    if (state != ReshardState::Idle)
      return done({protocol::error_message(protocol::ClientError::BalanceWhileMoving,
                                           reshard_state_name(state)),
                   {},
                   {}});
    run_balance(*this, std::move(request), std::move(done));
  });
}

void Server::analyze(AnalyzeRequest request, std::function<void(AnalyzeAnswer)> done) {
  asio::post(io_, [this, request = std::move(request), done = std::move(done)]() mutable {
    run_analysis(*this, std::move(request), std::move(done));
  });
}

void Server::reload(std::function<void(ReloadResult)> done) {
  asio::post(io_, [this, done = std::move(done)]() mutable {
    start_reload("SANTRAL RELOAD", std::move(done));
  });
}

void Server::start_reload(std::string why, std::function<void(ReloadResult)> done) {
  if (fleet_) return reload_in_fleet(std::move(why), std::move(done));
  reload_now(std::move(why), [done = std::move(done)](ReloadResult result) {
    if (done) done(std::move(result));
  });
}

void Server::reload_now(std::string why, std::function<void(ReloadResult)> done) {
  auto finish = [&](ReloadResult result) { done(remember_reload(why, std::move(result))); };
  const auto& current = *topology_->config;
  config::Config next;
  std::string text;
  try {
    text = source_.read_text();
    last_read_text_ = text;
    next = source_.parse(text);
  } catch (const config::ConfigError& e) {
    spdlog::error("reload ({}) rejected, still serving version {}: {}", why, topology_->version,
                  e.what());
    return finish({false, e.what()});
  }
  // Certificates are read again at every reload: new handshakes use renewed files.
  auto tls = make_tls_contexts(next);
  if (!tls.contexts) {
    spdlog::error("reload ({}) rejected, still serving version {}: {}: {}", why, topology_->version,
                  next.source.string(), tls.error);
    return finish({false, next.source.string() + ": " + tls.error});
  }
  std::vector<std::string> kept = keep_restart_settings(current, next);
  if (driver_->under_way()) {
    std::string error = fmt::format(
        "a move is {} (SANTRAL RESHARD STATUS); reload once it has ended, or ABORT it first",
        reshard_state_name(driver_->state()));
    spdlog::error("reload ({}) rejected, still serving version {}: {}", why, topology_->version,
                  error);
    return done({false, error});
  }
  put_tls_in_force(tls.contexts);
  auto version = next_version();
  config::TopologyPtr topology = [&] {
    auto made =
        std::make_shared<config::Topology>(*config::make_topology(std::move(next), version));
    made->salt_naming = topology_->salt_naming;  // sub-keys keep their names
    return made;
  }();
  auto change = config::compare_placement(*topology_->map, *topology->map);
  if (!config::moving_units(*topology_->map, *topology->map).empty() &&
      topology->config->distribution != config::Distribution::Random &&
      topology_->config->distribution != config::Distribution::Random) {
    return driver_->plan(topology, text, [this, why, done](bool ok, std::string message) {
      if (ok)
        spdlog::info("reload ({}): {}", why, message);
      else
        spdlog::error("reload ({}) rejected, still serving version {}: {}", why, topology_->version,
                      message);
      done(remember_reload(why, {ok, std::move(message)}));
    });
  }
  if (driver_->planned()) {
    spdlog::info(
        "resharding: the planned move is dropped: a reload put back a map that moves "
        "nothing");
    driver_->abort([](const std::string&) {});
  }
  local_->set_in_force_text(text);
  std::vector<Worker*> workers;
  for (auto& worker : workers_) workers.push_back(worker.get());
  post_to_each<Worker>(workers, [topology](Worker& worker) { worker.apply(topology); });
  topology_ = topology;
  shared_.topology_version = version;
  spdlog::set_level(spdlog::level::from_str(topology_->config->log_level));
  sentinel_.watch(*topology_->config);
  std::string message =
      fmt::format("version {}: {} shard{}; {}", version, topology_->map->shard_count(),
                  topology_->map->shard_count() == 1 ? "" : "s", change.summary());
  if (!kept.empty())
    message += fmt::format(" (needs a restart to change: {})", fmt::join(kept, ", "));
  spdlog::info("reloaded {} ({}): {}", source_.path.string(), why, message);
  finish({true, message});
}

ControlPlane::ReloadResult Server::remember_reload(std::string_view why, ReloadResult result) {
  last_reload_ = ReloadRecord{result, std::string(why), std::chrono::system_clock::now()};
  return result;
}

// Reloads when the file's modification time or size changes; checked once a second.
bool Server::already_read() const {
  try {
    return source_.read_text() == last_read_text_;
  } catch (const config::ConfigError&) {
    return false;
  }
}

void Server::watch_file() {
  std::error_code ec;
  auto time = std::filesystem::last_write_time(source_.path, ec);
  auto size = std::filesystem::file_size(source_.path, ec);
  if (!ec) {
    bool changed = file_time_ && (*file_time_ != time || file_size_ != size);
    file_time_ = time;
    file_size_ = size;
    // A file some reload has read already (SANTRAL RELOAD right after the edit) is not new.
    if (changed && topology_->config->watch_file && !already_read())
      start_reload("the file changed", nullptr);
  }
  if (fleet_) salting_.check_waiters();  // their deadlines
  driver_->advance();                    // a ledger write that failed is tried again
  watch_timer_.expires_after(kWatchPeriod);
  watch_timer_.async_wait([this](boost::system::error_code error) {
    if (!error) watch_file();
  });
}

}  // namespace santral::router
