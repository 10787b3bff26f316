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

// "127.0.0.1:6380", "127.0.0.1:6380 and TLS on 127.0.0.1:6390", "TLS on 127.0.0.1:6390".
std::string listeners(const config::Config& config) {
  std::string tls =
      config.tls.listen_port == 0
          ? ""
          : "TLS on " + config::Endpoint{config.tls.listen_host, config.tls.listen_port}.text();
  if (!config.plain_listener) return tls;
  return config.listen.text() + (tls.empty() ? "" : " and " + tls);
}

void log_topology(const config::Config& config) {
  spdlog::info(
      "santral {} listening on {} with {} worker{}; {} shard{} ({} distribution, {} hash{})",
      kVersion, listeners(config), config.workers, config.workers == 1 ? "" : "s",
      config.shards.size(), config.shards.size() == 1 ? "" : "s",
      config::distribution_name(config.distribution), config.hash_name,
      config.hash_tag.empty() ? "" : ", hash tag \"" + config.hash_tag + "\"");
  for (const auto& shard : config.shards)
    spdlog::info("  shard '{}' at {} (weight {}{})", shard.name, shard.address.text(), shard.weight,
                 shard.replicas.empty() ? "" : fmt::format(", {} replicas", shard.replicas.size()));
}

}  // namespace

config::Config ConfigSource::load() const {
  return parse(read_text());
}

std::string ConfigSource::read_text() const {
  std::ifstream in(path);
  if (!in) throw config::ConfigError(path.string(), 0, "", "cannot read the file");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

config::Config ConfigSource::parse(const std::string& text) const {
  config::Config config = config::parse_config(text, path, format, pool);
  resolve_sentinel_shards(config);  // the primaries and replicas Sentinel names, asked now
  if (workers) config.workers = *workers;
  if (log_level) config.log_level = *log_level;
  auto endpoint = [](const std::string& text, std::string_view option) {
    config::Endpoint out;
    if (!config::parse_endpoint(text, out))
      throw config::ConfigError("command line", 0, std::string(option),
                                "expected host:port, got '" + text + "'");
    return out;
  };
  if (listen) {
    config.listen = endpoint(*listen, "--listen");
    config.plain_listener = true;
  }
  if (admin_listen) config.admin.listen = endpoint(*admin_listen, "--admin-listen");
  return config;
}

Server::Server(ConfigSource source, config::Config config, FleetStart fleet)
    : source_(std::move(source)),
      topology_(config::make_topology(std::move(config), 1)),
      acceptor_(io_),
      tls_acceptor_(io_),
      signals_(io_, SIGINT, SIGTERM, SIGHUP),
      watch_timer_(io_),
      drain_timer_(io_),
      auto_salt_timer_(io_) {
  shared_.control = this;
  fleet_ = std::move(fleet.agent);
  if (fleet_) {
    auto in_fleet = std::make_shared<config::Topology>(*topology_);
    in_fleet->map_version = fleet.map_version;
    topology_ = in_fleet;
  }
  fleet_map_text_ = std::move(fleet.map_text);
  fleet_naming_text_ = std::move(fleet.salt_naming_text);
  file_map_text_ = std::move(fleet.file_map_text);
  if (fleet_ && !fleet_naming_text_.empty()) {
    // Salted counters are named as every router of the fleet names them (map_document.h).
    std::string error;
    auto naming = fleet_topology(fleet_naming_text_, error);
    auto named = std::make_shared<config::Topology>(*topology_);
    if (naming)
      named->salt_naming = naming->map;
    else
      spdlog::error("fleet: the map salted counters are named by does not load: {}", error);
    topology_ = named;
  }
  joined_move_ = std::move(fleet.move);
  if (fleet_ && fleet.salting) {
    // The fleet's run-time salting outlives any one router: it is taken before serving.
    auto decoded = decode_salt_overrides(fleet.salting->key, fleet.salting->value);
    if (decoded.overrides)
      shared_.salt_overrides = decoded.overrides;
    else
      spdlog::error("fleet: refusing the run-time salting in etcd: {}", decoded.error);
    fleet_->acknowledge_salting(fleet.salting->mod_revision);
  }
  if (fleet_) fleet_->acknowledge(static_cast<std::int64_t>(topology_->map_version));
  try {
    last_read_text_ = source_.read_text();
  } catch (const config::ConfigError&) {
  }
  MoveHost& host = *this;
  if (fleet_) {
    // In a fleet a move lives in etcd; a state file left by this router running alone is not
    // the fleet's (etcd's map is in force).
    fleet_ledger_ = std::make_unique<FleetLedger>(
        *fleet_, [this] { return fleet_map_text_; }, [this] { return fleet_naming_text_; });
    driver_ = std::make_unique<MoveDriver>(io_, host, *fleet_ledger_, fleet_->router_name());
    fleet_ledger_->on_change(
        [this](const std::optional<LedgerMove>& move) { offer_fleet_move(move); });
  } else {
    local_ = std::make_unique<LocalLedger>(source_.path, topology_->config->resharding.state_file);
    driver_ = std::make_unique<MoveDriver>(io_, host, *local_, "santral");
    local_->on_change([this](const std::optional<LedgerMove>& move) { driver_->take(move); });
    restore_moves(*topology_->config);
  }
  for (unsigned i = 0; i < topology_->config->workers; ++i)
    workers_.push_back(std::make_unique<Worker>(i, topology_, shared_));
  std::vector<Worker*> peers;
  for (auto& worker : workers_) peers.push_back(worker.get());
  for (auto& worker : workers_) worker->set_peers(peers);
}

Server::~Server() {
  for (auto& worker : workers_) worker->stop();
}

void Server::restore_moves(const config::Config& config) {
  LocalLedger::Kept kept;
  try {
    kept = local_->load();
  } catch (const StateFileError& e) {
    start_error_ = e.what();
    return;
  }
  auto load = [this](const std::string& text, std::string_view what) {
    std::string error;
    auto topology = topology_of(text, error);
    if (!topology)
      start_error_ = fmt::format("{}: {} kept there does not load any more: {}",
                                 local_->path().string(), what, error);
    else
      topology->version = next_version();
    return topology;
  };
  std::shared_ptr<const config::ShardMap> naming;
  if (!local_->naming_text().empty()) {
    auto named = load(local_->naming_text(), "the config salted counters are named by");
    if (!named) return;
    naming = named->map;
  }
  if (kept.move) {
    const auto& document = kept.move->document;
    auto from = load(document.from_text, "the config the move starts from");
    auto to = from ? load(document.to_text, "the config the move goes to") : nullptr;
    if (!to) return;
    from->salt_naming = naming;
    to->salt_naming = naming ? naming : from->map;
    if (document.phase == MoveDocument::Phase::Planned) {
      topology_ = from;
    } else {
      bool back = document.phase == MoveDocument::Phase::Aborting;
      topology_ =
          moving_topology(back ? *to : *from, back ? *from : *to, next_version(), document.epoch);
    }
    kept_move_ = kept.move;
    spdlog::info("resharding: {} holds a move ({}); it resumes", local_->path().string(),
                 phase_name(document.phase));
    return;
  }
  auto file = std::make_shared<config::Topology>(*topology_);
  file->salt_naming = naming;
  if (!kept.in_force_text.empty()) {
    auto in_force = load(kept.in_force_text, "the config in force");
    if (!in_force) return;
    in_force->salt_naming = naming;
    bool random = config.distribution == config::Distribution::Random ||
                  in_force->config->distribution == config::Distribution::Random;
    if (!random && !config::moving_units(*in_force->map, *file->map).empty()) {
      // Keys are where the map in force put them: the file's map is a move to plan, never a
      // silent switch.
      spdlog::warn(
          "resharding: the map of {} differs from the map in force kept in {}; serving the "
          "map in force and planning a move to the file's ({})",
          source_.path.string(), local_->path().string(),
          config::compare_placement(*in_force->map, *file->map).summary());
      planned_at_start_ = file;
      topology_ = in_force;
      return;
    }
  }
  topology_ = file;
  local_->set_in_force_text(last_read_text_);
}

// Binds `acceptor` to host:port; false (and logged) when it cannot.
bool Server::open_listener(tcp::acceptor& acceptor, const std::string& host, std::uint16_t port,
                           std::string_view what) {
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  std::string address = config::Endpoint{host, port}.text();
  if (ec || endpoints.empty()) {
    spdlog::critical("cannot resolve {} address {}: {}", what, address, ec.message());
    return false;
  }
  tcp::endpoint endpoint = *endpoints.begin();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    spdlog::critical("cannot listen on {} ({}): {}", address, what, ec.message());
    return false;
  }
  return true;
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
  if (config.plain_listener &&
      !open_listener(acceptor_, config.listen.host, config.listen.port, "listen"))
    return 1;
  if (config.tls.listen_port != 0 &&
      !open_listener(tls_acceptor_, config.tls.listen_host, config.tls.listen_port, "tls.listen"))
    return 1;
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
    fleet_->start(
        io_,
        {[this](const EtcdKeyValue& map) { take_fleet_map(map); },
         [this](const EtcdKeyValue& salting) { take_fleet_salting(salting); },
         [this] {
           check_salt_waiters();
           driver_->advance();
         },
         [this](const std::optional<EtcdKeyValue>& move) { take_fleet_move(move); },
         [this](bool mine) { driver_->coordinate(mine); },
         [this](std::function<void()> confirm) {
           // It serves again once it serves the version etcd holds (take_fleet_map
           // confirms when it takes it); the workers' queues hold the topology taken
           // meanwhile ahead of the fence.
           if (static_cast<std::int64_t>(topology_->map_version) != fleet_->seen_map_version()) {
             spdlog::warn(
                 "fleet '{}': back with map version {} while etcd holds {}; "
                 "not serving until it serves that one",
                 fleet_->settings().name, topology_->map_version, fleet_->seen_map_version());
             rejoin_ = std::move(confirm);
             return;
           }
           fence_workers(io_, worker_list(), {}, nullptr, std::move(confirm));
         }},
        &shared_.fleet_serve_until_ns);
    if (joined_move_) take_fleet_move(std::exchange(joined_move_, std::nullopt));
  }
  follow_sentinels();
  wait_for_signals();
  watch_file();
  check_auto_salting();
  if (acceptor_.is_open()) accept(acceptor_, false);
  if (tls_acceptor_.is_open()) accept(tls_acceptor_, true);
  io_.run();
  for (auto& worker : workers_) worker->stop();
  if (fleet_) {
    fleet_->stop();  // leaves the fleet: the others see it go at once
    set_write_fence(nullptr);
  }
  spdlog::info("santral stopped");
  return 0;
}

void Server::accept(tcp::acceptor& acceptor, bool tls) {
  acceptor.async_accept([this, &acceptor, tls](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || shutting_down_) return;
    if (ec) {
      spdlog::warn("accept failed: {}", ec.message());
    } else {
      hand_over(std::move(socket), tls);
    }
    accept(acceptor, tls);
  });
}

// An accepted connection goes to the next worker. Its descriptor leaves this thread's reactor
// and joins the worker's on the worker's own thread: a worker's reactor runs without locks on
// its descriptors (BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO), so no other thread may register one.
void Server::hand_over(tcp::socket socket, bool tls) {
  boost::system::error_code ec;
  std::size_t max_clients = topology_->config->limits.max_clients;
  if (shared_.connected_clients.load() >= max_clients) {
    shared_.rejected_clients.fetch_add(1);
    std::string reply;
    protocol::RespWriter(reply).error(
        protocol::error_message(protocol::ClientError::MaxClients, max_clients));
    asio::write(socket, asio::buffer(reply), ec);
    socket.close(ec);
    return;
  }
  auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;  // already reset by the client
  auto descriptor = socket.release(ec);
  if (ec) return;
  Worker& worker = *workers_[next_worker_];
  next_worker_ = (next_worker_ + 1) % workers_.size();
  shared_.connected_clients.fetch_add(1);
  auto id = shared_.next_client_id.fetch_add(1);
  asio::post(worker.io(), [this, &worker, id, tls, protocol, descriptor] {
    tcp::socket adopted(worker.io());
    boost::system::error_code ec;
    adopted.assign(protocol, descriptor, ec);
    if (ec) {
      ::close(descriptor);
      shared_.connected_clients.fetch_sub(1);
      return;
    }
    worker.adopt(std::move(adopted), id, tls);
  });
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
  auto drain = topology_->config->drain;
  spdlog::info(
      "received {}: no new clients; answering what was already sent (up to {} ms); "
      "send it again to exit at once",
      signal == SIGINT ? "SIGINT" : "SIGTERM", drain.count());
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  tls_acceptor_.close(ignored);
  watch_timer_.cancel();
  auto_salt_timer_.cancel();
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
              fold_run_time_salting();
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

// Salting made at run time (SANTRAL SALT, automatic) lasts until exit: it is folded back once
// the clients are gone, or the next start would read those counters without their sub-keys.
// Bounded by the same drain_ms.
void Server::fold_run_time_salting() {
  Worker* home = workers_.front().get();
  asio::post(home->io(), [this, home] {
    auto keys = run_time_salted_keys(*home, false);
    auto left = std::make_shared<std::size_t>(keys.size() + 1);
    auto one_done = [this, left] {
      if (--*left == 0) asio::post(io_, [this] { finish_shutdown(); });
    };
    for (const auto& key : keys) {
      auto done = [one_done, key](const std::string& reply) {
        if (!reply.starts_with("+OK"))
          spdlog::error("folding '{}' before exiting failed: {}", key, reply);
        one_done();
      };
      if (!unsalt_key(*home, key, false, "before exiting (salting made at run time ends with it)",
                      UnsaltFoldTarget{home->pool().default_profile(), 0, done}))
        one_done();
    }
    one_done();
  });
}

void Server::finish_shutdown() {
  drain_timer_.cancel();
  signals_.cancel();
  io_.stop();
}

std::vector<Worker*> Server::worker_list() const {
  std::vector<Worker*> workers;
  for (const auto& worker : workers_) workers.push_back(worker.get());
  return workers;
}

std::vector<WorkerServices*> Server::worker_services() const {
  std::vector<WorkerServices*> services;
  for (const auto& worker : workers_) services.push_back(worker.get());
  return services;
}

void Server::switch_topology(config::TopologyPtr topology, std::function<void()> done) {
  if (fleet_) fleet_->use_shards(shards_of(*topology));
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
  if (fleet_) return fleet_topology(text, error);
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

std::vector<std::string> Server::keep_restart_settings(const config::Config& current,
                                                       config::Config& next) {
  std::vector<std::string> kept;
  if (next.listen.text() != current.listen.text()) {
    kept.push_back("listen stays " + current.listen.text());
    next.listen = current.listen;
  }
  if (next.workers != current.workers) {
    kept.push_back("workers stays " + std::to_string(current.workers));
    next.workers = current.workers;
  }
  if (next.plain_listener != current.plain_listener ||
      next.tls.listen_host != current.tls.listen_host ||
      next.tls.listen_port != current.tls.listen_port) {
    kept.emplace_back("the listeners (listen, tls.listen) stay as they are");
    next.plain_listener = current.plain_listener;
    next.tls.listen_host = current.tls.listen_host;
    next.tls.listen_port = current.tls.listen_port;
  }
  if (next.admin.listen.text() != current.admin.listen.text()) {
    kept.push_back("admin.listen stays " + current.admin.listen.text());
    next.admin.listen = current.admin.listen;
  }
  if (next.cluster.etcd != current.cluster.etcd || next.cluster.name != current.cluster.name ||
      next.cluster.router != current.cluster.router) {
    kept.emplace_back("cluster stays as it is");
    next.cluster = current.cluster;
  }
  return kept;
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
  follow_sentinels();
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
  if (fleet_) check_salt_waiters();  // their deadlines
  driver_->advance();                // a ledger write that failed is tried again
  watch_timer_.expires_after(kWatchPeriod);
  watch_timer_.async_wait([this](boost::system::error_code error) {
    if (!error) watch_file();
  });
}

// hotkeys.auto_salt: every check_ms, merges the workers' rates and salts or unsalts what
// AutoSalting decides, on the first worker (as SANTRAL SALT/UNSALT would). Off: checks once a
// second whether a reload turned it on.
void Server::check_auto_salting() {
  auto rearm = [this](std::chrono::milliseconds after) {
    if (shutting_down_) return;
    auto_salt_timer_.expires_after(after);
    auto_salt_timer_.async_wait([this](boost::system::error_code error) {
      if (!error) check_auto_salting();
    });
  };
  const auto& settings = topology_->config->hotkeys.auto_salt;
  if (!settings.enabled || workers_.empty()) {
    auto_salting_.clear();
    return rearm(kWatchPeriod);
  }
  collect_hot_keys(worker_services(), io_, [this, rearm](const std::vector<HotKeyRate>& rates) {
    const auto& settings = topology_->config->hotkeys.auto_salt;
    Worker* home = workers_.front().get();
    if (settings.enabled && !shutting_down_) {
      auto decisions = auto_salting_.check(settings, rates, run_time_salted_keys(*home, true),
                                           std::chrono::steady_clock::now());
      for (auto& decision : decisions)
        asio::post(home->io(), [home, decision = std::move(decision), settings] {
          carry_out(*home, decision, settings);
        });
    }
    rearm(std::chrono::milliseconds(settings.check_ms));
  });
}

}  // namespace santral::router
