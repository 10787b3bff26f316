#include "router/process/server.h"

#include <cstdlib>

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "config/config_error.h"
#include "protocol/errors.h"
#include "router/admin/admin_server.h"
#include "router/backend/connection_name.h"
#include "router/backend/draining_connections.h"
#include "router/backend/earlier_runs.h"
#include "router/backend/write_fence.h"
#include "router/process/analyze_run.h"
#include "router/process/balance_run.h"
#include "router/routes/in_flight_barrier.h"
#include "router/runtime/fan_out.h"
#include "router/status/router_record.h"
#include "router/transport/tls_contexts.h"
#include "santral/version.h"

namespace santral::router {

namespace asio = boost::asio;

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

// Which router this is, as its connections name it on the shards (connection_name.h): its name
// in a fleet, else this host and its client listen address.
std::string router_identity(const config::Config& config, const FleetStart& fleet) {
  if (fleet.agent) return fleet.agent->router_name();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  return fmt::format("{}:{}", host, config.listen.text());
}

}  // namespace

Server::Server(ConfigSource source, config::Config config, FleetStart fleet)
    : source_(std::move(source)),
      topology_(placement::make_topology(std::move(config), 1)),
      listeners_(io_, shared_, workers_, topology_),
      watch_timer_(io_),
      salting_(io_, shared_, workers_, topology_, fleet.agent.get()),
      sentinel_(io_, *this, shared_, [this](const std::shared_ptr<const WriteRefusals>& refusals) {
        post_to_each<Worker>(worker_list(),
                             [refusals](Worker& worker) { worker.set_write_refusals(refusals); });
      }) {
  shared_.control = this;
  shared_.client_id_base = client_id_base(*topology_->config);
  shared_.limiters.configure(*topology_->config);
  if (const auto& audit = topology_->config->audit; audit.enabled()) {
    audit_ = AuditLog::open(audit, own_record(*topology_->config).name, audit_error_);
    shared_.audit = audit_.get();
  }
  name_connections(router_identity(*topology_->config, fleet));
  if (fleet.agent) {
    fleet_ = std::make_unique<FleetSync>(io_, static_cast<RouterHost&>(*this), shared_, fleet);
    topology_ = fleet_->first_topology(topology_);
  }
  MoveHost& host = *this;
  if (fleet_) {
    fleet_->agent().acknowledge(static_cast<std::int64_t>(topology_->map_version));
    driver_ =
        std::make_unique<MoveDriver>(io_, host, fleet_->ledger(), fleet_->agent().router_name());
    fleet_->set_driver(*driver_);
  } else {
    local_ = std::make_unique<LocalLedger>(source_.path, topology_->config->resharding.state_file);
    driver_ = std::make_unique<MoveDriver>(io_, host, *local_, "santral");
    local_->on_change([this](const std::optional<LedgerMove>& move) { driver_->take(move); });
    start_error_ = salting_.restore(source_.path);
  }
  reloads_ = std::make_unique<ConfigReloads>(
      source_, static_cast<RouterHost&>(*this), *driver_, local_.get(), fleet_.get(), shared_.audit,
      [this](const config::Config& config) { sentinel_.watch(config); });
  Shutdown::Steps steps;
  steps.reload = [this] { reloads_->reload("SIGHUP", {"signal", "", ""}, nullptr); };
  steps.stop_taking_work = [this] { stop_taking_work(); };
  shutdown_ = std::make_unique<Shutdown>(io_, workers_, topology_, std::move(steps));
  if (local_) {
    auto start = restore_local_moves(*local_, *this, topology_, source_.path);
    topology_ = start.topology;
    kept_move_ = std::move(start.kept_move);
    planned_at_start_ = std::move(start.planned);
    if (start_error_.empty()) start_error_ = std::move(start.error);
    if (start.file_in_force) local_->set_in_force_text(reloads_->last_read_text());
  }
  sentinel_.set_driver(*driver_);
  for (unsigned i = 0; i < topology_->config->workers; ++i)
    workers_.push_back(std::make_unique<Worker>(i, topology_, shared_, migrations_));
  for (auto& worker : workers_) worker->set_peers(worker_list());
}

Server::~Server() {
  for (auto& worker : workers_) worker->stop();
}

int Server::run() {
  for (const auto* error : {&audit_error_, &start_error_})
    if (!error->empty()) {
      spdlog::critical("{}", *error);
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
      if (kept_move_ && kept_move_->document.phase != MoveDocument::Phase::Planned)
        end_earlier_runs_first();
      if (kept_move_) driver_->take(std::exchange(kept_move_, std::nullopt));
      if (auto to = std::exchange(planned_at_start_, nullptr))
        driver_->plan(to, reloads_->last_read_text(), [](bool ok, const std::string& message) {
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
  shutdown_->wait_for_signals();
  every_second();
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

// The first SIGINT or SIGTERM: no new clients, no more timers; the workers drain next.
void Server::stop_taking_work() {
  sentinel_.stop();
  listeners_.close();
  watch_timer_.cancel();
  salting_.stop();
  if (admin_) admin_->close();
}

std::vector<Worker*> Server::worker_list() const {
  return pointers_to<Worker>(workers_);
}

std::vector<WorkerServices*> Server::worker_services() const {
  return pointers_to<WorkerServices>(workers_);
}

void Server::switch_topology(placement::TopologyPtr topology, std::function<void()> done) {
  if (fleet_) fleet_->agent().use_shards(shards_of(*topology));
  topology_ = topology;
  shared_.topology_version = topology->version;
  shared_.limiters.configure(*topology->config);
  // The workers' connections, then the server's own (the walk's, the samplers'): what any of
  // them gave up on is proven over first (draining_connections.h).
  barrier_workers(
      io_, worker_list(), {}, [topology](Worker& worker) { worker.apply(topology); },
      [this, done = std::move(done)]() mutable {
        DrainingConnections::of(io_).after_all(
            [this, done = std::move(done)]() mutable { after_earlier_runs(std::move(done)); });
      });
}

// A move resumed at start: the connections the router's earlier run left on the shards are
// ended first (earlier_runs.h); the first switch waits for it.
void Server::end_earlier_runs_first() {
  std::vector<BackendTarget> servers;
  const auto& map = *topology_->map;
  for (std::size_t s = 0; s < map.shard_count(); ++s)
    servers.push_back({s, map.shard(s).name, map.shard(s).address, {}});
  earlier_runs_ended_ = false;
  end_earlier_runs(io_, std::move(servers), topology_->config, [this] {
    earlier_runs_ended_ = true;
    for (auto& then : std::exchange(after_earlier_runs_, {})) then();
  });
}

void Server::after_earlier_runs(std::function<void()> then) {
  if (earlier_runs_ended_) return then();
  after_earlier_runs_.push_back(std::move(then));
}

void Server::release_pulls() {
  post_to_each<Worker>(worker_list(), [](Worker& worker) { worker.release_moves(); });
}

std::shared_ptr<placement::Topology> Server::topology_of(const std::string& text,
                                                         std::string& error) {
  if (fleet_) return fleet_->topology_of(text, error);
  try {
    return std::make_shared<placement::Topology>(*placement::make_topology(source_.parse(text), 0));
  } catch (const config::ConfigError& e) {
    error = e.what();
    return nullptr;
  }
}

void Server::reshard(ReshardVerb verb, AuditActor who, std::function<void(ReshardAnswer)> done) {
  asio::post(io_, [this, verb, who = std::move(who), done = std::move(done)]() mutable {
    auto answer = [this, verb, who = std::move(who),
                   done = std::move(done)](const std::string& error) {
      auto status = driver_->status();
      if (verb == ReshardVerb::Approve || verb == ReshardVerb::Abort)
        audit_move(verb, who, error, status);
      done({error, std::move(status)});
    };
    if (verb == ReshardVerb::Approve) return driver_->approve(std::move(answer));
    if (verb == ReshardVerb::Abort) return driver_->abort(std::move(answer));
    answer({});
  });
}

void Server::accept_failover(std::string shard, AuditActor who,
                             std::function<void(FailoverAnswer)> done) {
  // The workers are told before `done` answers: a write sent after the answer goes through.
  asio::post(io_, [this, shard = std::move(shard), who = std::move(who), done = std::move(done)] {
    auto answer = sentinel_.accept(shard);
    if (shared_.audit != nullptr)
      shared_.audit->record({"failover.accept",
                             who,
                             "SANTRAL FAILOVER ACCEPT " + shard,
                             answer.error.empty(),
                             protocol::one_line(answer.error.empty() ? answer.said : answer.error),
                             {}});
    done(std::move(answer));
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

void Server::reload(AuditActor who, std::function<void(ReloadResult)> done) {
  asio::post(io_, [this, who = std::move(who), done = std::move(done)]() mutable {
    std::string why = who.via == "http" ? "POST /reload" : "SANTRAL RELOAD";
    reloads_->reload(why, std::move(who), std::move(done));
  });
}

// SANTRAL RESHARD APPROVE/ABORT, POST /reshard/approve|abort: one line of the audit log (PLAN
// and STATUS only read).
void Server::audit_move(ReshardVerb verb, const AuditActor& who, const std::string& error,
                        const ReshardStatus& status) {
  if (shared_.audit == nullptr) return;
  bool approve = verb == ReshardVerb::Approve;
  std::string command = who.via == "http"
                            ? (approve ? "POST /reshard/approve" : "POST /reshard/abort")
                            : (approve ? "SANTRAL RESHARD APPROVE" : "SANTRAL RESHARD ABORT");
  shared_.audit->record({approve ? "move.approve" : "move.abort",
                         who,
                         std::move(command),
                         error.empty(),
                         error.empty() ? fmt::format("state: {}", reshard_state_name(status.state))
                                       : protocol::one_line(error),
                         {}});
}

ControlPlane::ReloadResult Server::remember_reload(std::string_view why, ReloadResult result) {
  return reloads_->remember(why, std::move(result));
}

// Once a second: the file's changes, the salting waiters' deadlines, and a ledger write that
// failed is tried again.
void Server::every_second() {
  reloads_->check_file();
  if (fleet_) salting_.check_waiters();
  driver_->advance();
  watch_timer_.expires_after(kWatchPeriod);
  watch_timer_.async_wait([this](boost::system::error_code error) {
    if (!error) every_second();
  });
}

std::optional<FleetView> Server::fleet_view() const {
  if (!fleet_) return std::nullopt;
  return fleet_->view();
}

std::optional<ControlPlane::Unready> Server::unready() const {
  if (shutdown_->draining())
    return Unready{"draining",
                   protocol::error_message(protocol::ClientError::ProbeDraining,
                                           topology_->config->shutdown.ready_delay.count())};
  if (fleet_) return fleet_->unready();
  return std::nullopt;
}

void Server::put_in_force(placement::TopologyPtr topology) {
  if (fleet_) fleet_->agent().use_shards(shards_of(*topology));
  post_to_each<Worker>(worker_list(), [topology](Worker& worker) { worker.apply(topology); });
  topology_ = std::move(topology);
  shared_.topology_version = topology_->version;
  shared_.limiters.configure(*topology_->config);
  spdlog::set_level(spdlog::level::from_str(topology_->config->log_level));
}

void Server::barrier_all(std::function<void()> done) {
  barrier_workers(io_, worker_list(), {}, nullptr, [this, done = std::move(done)]() mutable {
    DrainingConnections::of(io_).after_all(std::move(done));
  });
}

void Server::push_map(std::string text, AuditActor who, std::function<void(ReloadResult)> done) {
  // On the server's thread, where done runs too.
  auto audited = [this, who = std::move(who), bytes = text.size(),
                  done = std::move(done)](ReloadResult result) {
    if (shared_.audit != nullptr)
      shared_.audit->record({"map.push",
                             who,
                             fmt::format("SANTRAL MAP PUSH <{} bytes>", bytes),
                             result.ok,
                             protocol::one_line(result.message),
                             {}});
    done(std::move(result));
  };
  if (fleet_) return fleet_->push_map(std::move(text), std::move(audited));
  asio::post(io_, [done = std::move(audited)] {
    done({false, protocol::error_message(protocol::ClientError::NotInFleet)});
  });
}

void Server::share_salting(SaltChange change, std::function<void(std::string)> done) {
  salting_.share(std::move(change), std::move(done));
}

}  // namespace santral::router
