// The server's side of a fleet (`cluster:`): the map in force comes from etcd, and reloads
// and SANTRAL MAP PUSH propose the next one there (router/cluster/).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "config/config_error.h"
#include "config/placement_change.h"
#include "config/placement_diff.h"
#include "config/shared_map.h"
#include "protocol/errors.h"
#include "router/backend/sentinel_lookup.h"
#include "router/cluster/map_document.h"
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

Server::FleetMap Server::fleet_map(const std::string& key, const std::string& document) const {
  FleetMap out;
  auto decoded = decode_map(key, document);
  // Keys change owners only through a move (router/resharding/move_driver.h); a map that gives
  // them new owners at once would strand them. But a map is taken as it is when its lineage
  // says this router missed what came before it: one a move ended with (where the keys are
  // now), or one written over a later version than this router serves (it was away, out of
  // touch, while the fleet went on). Only a map written over the very version in force here
  // that moves keys without a move is refused: nobody moved them.
  out.missed = decoded.moved_from != 0 ||
               (decoded.based_on != 0 &&
                decoded.based_on != static_cast<std::int64_t>(topology_->map_version));
  if (!decoded.shared) {
    out.error = decoded.error;
    return out;
  }
  config::Config next = *topology_->config;
  config::adopt_shared_map(next, *decoded.shared);
  try {
    keep_sentinel_shards(next, *topology_->config);
  } catch (const config::ConfigError& e) {
    out.error = fmt::format("etcd key {}: {}", key, e.what());
    return out;
  }
  auto made = std::make_shared<config::Topology>(*config::make_topology(std::move(next), 0));
  // Every router names salted counters by the map the document says, one that started after
  // the move that made it necessary too.
  if (!decoded.salt_naming.empty()) {
    std::string error;
    auto naming = fleet_topology(decoded.salt_naming, error);
    if (!naming) {
      out.error = fmt::format("etcd key {}: field salt_naming: {}", key, error);
      return out;
    }
    made->salt_naming = naming->map;
  }
  if (!out.missed && !config::moving_units(*topology_->map, *made->map).empty())
    out.error = fmt::format(
        "etcd key {}: field config: the map gives keys new owners ({}) without a move; propose "
        "it with `santral map push FILE` or a reload, which plans the move",
        key, config::compare_placement(*topology_->map, *made->map).summary());
  out.moves = !out.error.empty();
  out.topology = std::move(made);
  out.text = std::move(decoded.config_text);
  out.naming_text = std::move(decoded.salt_naming);
  out.pushed_by = std::move(decoded.pushed_by);
  return out;
}

// Every shard a request of `topology` may reach: its map's (a move's source shards are in it,
// draining) and the salted counters' naming map's.
std::vector<config::ShardConfig> shards_of(const config::Topology& topology) {
  std::vector<config::ShardConfig> shards;
  for (const config::ShardMap* map : {topology.map.get(), &topology.naming_map()})
    for (std::size_t i = 0; i < map->shard_count(); ++i) shards.push_back(map->shard(i));
  return shards;
}

void Server::put_in_force(config::TopologyPtr topology) {
  if (fleet_) fleet_->use_shards(shards_of(*topology));
  post_to_each<Worker>(worker_list(), [topology](Worker& worker) { worker.apply(topology); });
  topology_ = std::move(topology);
  shared_.topology_version = topology_->version;
  spdlog::set_level(spdlog::level::from_str(topology_->config->log_level));
}

// A map version read from etcd: every router takes it, the one that proposed it too.
void Server::take_fleet_map(const EtcdKeyValue& map) {
  auto version = static_cast<std::uint64_t>(map.mod_revision);
  if (version == topology_->map_version) return;
  std::string why = fmt::format("etcd (map version {})", version);
  auto next = fleet_map(map.key, map.value);
  if (!next.topology || next.moves) {
    // Where the fleet moved keys to a map this router cannot take, its own map no longer says
    // where they are: it serves nothing until it takes one (F14).
    bool stop = !next.topology && next.missed;
    spdlog::error(
        "fleet '{}': refusing map version {}: {}; {} version {}", fleet_->settings().name, version,
        next.error,
        stop ? "the fleet's keys may have moved: serving nothing, not even" : "still serving",
        topology_->map_version);
    // Logged before it takes effect: a client told CLUSTERDOWN finds the reason in the log.
    if (stop) shared_.fleet_map_refused.store(version, std::memory_order_relaxed);
    remember_reload(why, {false, next.error});
    return;
  }
  shared_.fleet_map_refused.store(0, std::memory_order_relaxed);
  next.topology->version = next_version();
  next.topology->map_version = version;
  auto change = config::compare_placement(*topology_->map, *next.topology->map);
  fleet_map_text_ = std::move(next.text);
  fleet_naming_text_ = std::move(next.naming_text);
  put_in_force(next.topology);
  // The move that waited for this map starts before anything is served on it alone (a router
  // back from an outage serves again below, after the move's topology).
  if (waiting_move_ && waiting_move_->document.from_version == map.mod_revision)
    offer_fleet_move(std::exchange(waiting_move_, std::nullopt));
  waiting_move_.reset();  // one from an earlier map ended: the next read says what follows
  fleet_->acknowledge(map.mod_revision);
  // Back from an outage: it serves again only once it serves the version etcd holds.
  if (rejoin_ && static_cast<std::int64_t>(topology_->map_version) == fleet_->seen_map_version())
    fence_workers(io_, worker_list(), {}, nullptr, std::exchange(rejoin_, nullptr));
  std::string message =
      fmt::format("version {} (pushed by {}): {} shard{}; {}", version,
                  next.pushed_by.empty() ? "?" : next.pushed_by, topology_->map->shard_count(),
                  topology_->map->shard_count() == 1 ? "" : "s", change.summary());
  spdlog::info("fleet '{}': serving map {}", fleet_->settings().name, message);
  remember_reload(why, {true, message});
}

void Server::propose_map(const std::string& shared_text, std::function<void(ReloadResult)> done) {
  auto expected = static_cast<std::int64_t>(topology_->map_version);
  std::string document =
      encode_map({shared_text, fleet_->router_name(), 0, expected, fleet_naming_text_});
  if (driver_->under_way())
    return done({false, protocol::error_message(
                            protocol::ClientError::MapProposal,
                            fmt::format("a move is {} (SANTRAL RESHARD STATUS); propose once it "
                                        "has ended, or ABORT it first",
                                        reshard_state_name(driver_->state())))});
  // Checked here as every router will check it, so that a refused map never reaches etcd.
  auto checked = fleet_map(fleet_->map_key(), document);
  // A map that moves keys is proposed as a move (it replaces a planned one).
  if (checked.moves)
    return driver_->plan(checked.topology, shared_text,
                         [this, done = std::move(done)](bool ok, std::string message) {
                           if (ok)
                             message += fmt::format(" across fleet '{}'", fleet_->settings().name);
                           spdlog::info("fleet '{}': {}", fleet_->settings().name, message);
                           if (done) done({ok, std::move(message)});
                         });
  if (driver_->planned())
    return done({false, protocol::error_message(
                            protocol::ClientError::MapProposal,
                            "a move is planned (SANTRAL RESHARD STATUS); propose once it has "
                            "ended, or ABORT it first")});
  if (!checked.topology) {
    if (done)
      done({false, protocol::error_message(protocol::ClientError::MapProposal, checked.error)});
    return;
  }
  // Compared on the map and on the move key's absence: a move this router has not seen yet
  // must not be followed by a map it would never end with.
  std::string map_key = fleet_->map_key(), move_key = fleet_->move_key();
  fleet_->call(
      [document = std::move(document), map_key, move_key, expected](EtcdClient& etcd,
                                                                    std::int64_t& revision) {
        using Compare = EtcdClient::Compare;
        auto written = etcd.txn({{map_key, Compare::Target::ModRevision, expected, {}},
                                 {move_key, Compare::Target::ModRevision, 0, {}}},
                                {{map_key, document, 0}}, {});
        if (!written)
          return fmt::format(
              "it was proposed on version {}, and the map changed or a move began meanwhile; "
              "look at SANTRAL SHARDMAP and SANTRAL RESHARD STATUS and propose again",
              expected);
        revision = *written;
        return std::string();
      },
      [this, done = std::move(done)](std::int64_t revision, const std::string& error) {
        ReloadResult result;
        if (!error.empty()) {
          result = {false, protocol::error_message(protocol::ClientError::MapProposal, error)};
          spdlog::error("fleet '{}': {}", fleet_->settings().name, result.message);
        } else {
          result = {true, fmt::format("proposed map version {} to fleet '{}'; every router "
                                      "serves it once it reads it (SANTRAL ROUTERS shows "
                                      "their versions)",
                                      revision, fleet_->settings().name)};
          spdlog::info("fleet '{}': {}", fleet_->settings().name, result.message);
        }
        if (done) done(std::move(result));
      });
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
  bool news = !file_map.empty() && file_map != file_map_text_ && file_map != fleet_map_text_;
  if (!file_map.empty()) file_map_text_ = file_map;
  if (!news)
    return finish({true, fmt::format("{}; the file's map is not new: the fleet's version {} stays "
                                     "(santral map push FILE proposes a map)",
                                     message, topology_->map_version)});
  propose_map(file_map, [this, why, message, done = std::move(done)](const ReloadResult& proposed) {
    ReloadResult result{proposed.ok, message + "; " + proposed.message};
    remember_reload(why, result);
    if (done) done(std::move(result));
  });
}

std::shared_ptr<config::Topology> Server::fleet_topology(const std::string& shared_text,
                                                         std::string& error) const {
  config::Config shared;
  try {
    shared = config::parse_config(shared_text, "etcd key " + fleet_->move_key(),
                                  config::ConfigFormat::Santral);
  } catch (const config::ConfigError& e) {
    error = e.what();
    return nullptr;
  }
  config::Config next = *topology_->config;
  config::adopt_shared_map(next, shared);
  try {
    keep_sentinel_shards(next, *topology_->config);
  } catch (const config::ConfigError& e) {
    error = e.what();
    return nullptr;
  }
  return std::make_shared<config::Topology>(*config::make_topology(std::move(next), 0));
}

// The move document as etcd holds it: the move driver (router/resharding/move_driver.h)
// carries it out on this router.
void Server::take_fleet_move(const std::optional<EtcdKeyValue>& kv) {
  if (!kv) return driver_->take(std::nullopt);
  std::string error;
  auto move = fleet_ledger_->read(*kv, error);
  if (!move)
    return spdlog::error("fleet '{}': refusing the move document: {}", fleet_->settings().name,
                         error);
  offer_fleet_move(move);
}

// A move starts from a map version; a router that has not taken that map yet (its own APPROVE
// answered before its next read of etcd brought the map, or it is back from an outage) would
// switch to the move's epoch and then take the map the move starts from as a plain map over
// the move's topology. It waits for the map instead, and sets aside the move it was still
// carrying out (the fleet ended it: a later move starts from where it ended): that move's
// walk stops, and its topology stays in force until the map comes ("pull, then run" stays
// right for its keys).
void Server::offer_fleet_move(const std::optional<LedgerMove>& move) {
  auto serving = static_cast<std::int64_t>(topology_->map_version);
  if (move && move->document.from_version > serving) {
    if (!waiting_move_ || waiting_move_->id != move->id)
      spdlog::info(
          "fleet '{}': the move proposed by {} starts from map version {}; this router serves "
          "version {}: it takes that map first",
          fleet_->settings().name, move->document.proposed_by, move->document.from_version,
          serving);
    waiting_move_ = move;
    driver_->set_aside();
    return;
  }
  // The move it waited for is gone (this router aborted it while planned): the topology set
  // aside stays until the map comes, rather than this router's older map.
  if (!move && std::exchange(waiting_move_, std::nullopt)) return;
  waiting_move_.reset();
  driver_->take(move);
}

void Server::push_map(std::string text, std::function<void(ReloadResult)> done) {
  asio::post(io_, [this, text = std::move(text), done = std::move(done)]() mutable {
    if (!fleet_) return done({false, protocol::error_message(protocol::ClientError::NotInFleet)});
    std::string shared;
    try {
      shared = config::shared_map_text(text, "SANTRAL MAP PUSH");
    } catch (const config::ConfigError& e) {
      return done({false, protocol::error_message(protocol::ClientError::MapProposal, e.what())});
    }
    propose_map(shared, std::move(done));
  });
}

void Server::share_salting(SaltChange change, std::function<void(std::string)> done) {
  asio::post(io_, [this, change = std::move(change), done = std::move(done)]() mutable {
    if (!fleet_) return done({});
    fleet_->update(
        fleet_->salting_key(),
        [change = std::move(change)](const std::string& current) {
          return apply_salt_change(current, change);
        },
        [this, done = std::move(done)](std::int64_t revision, const std::string& error) {
          if (!error.empty()) return done("the fleet's salting was not changed: " + error);
          // Every router must take it, this one too (when its next read of etcd finds it).
          auto wait = std::chrono::seconds(2) * fleet_->settings().lease_ttl.count();
          salt_waiters_.push_back({revision, done, std::chrono::steady_clock::now() + wait});
          check_salt_waiters();
        });
  });
}

// A salting version read from etcd: every worker takes it, then waits out what it had sent
// by the old one; only then does this router acknowledge it (an UNSALT elsewhere waits for
// that before folding the sub-keys).
void Server::take_fleet_salting(const EtcdKeyValue& salting) {
  auto decoded = decode_salt_overrides(salting.key, salting.value);
  if (!decoded.overrides) {
    spdlog::error("fleet '{}': refusing salting version {}: {}", fleet_->settings().name,
                  salting.mod_revision, decoded.error);
    return;
  }
  {
    std::lock_guard lock(shared_.salt_lock);
    shared_.salt_overrides = decoded.overrides;
    ++shared_.salt_version;
  }
  auto version = salting.mod_revision;
  fence_workers(
      io_, worker_list(), {}, [](Worker& worker) { worker.refresh_salts(); },
      [this, version] { fleet_->acknowledge_salting(version); });
}

void Server::check_salt_waiters() {
  if (salt_waiters_.empty()) return;
  auto view = fleet_->view();
  auto now = std::chrono::steady_clock::now();
  std::vector<SaltWaiter> waiting;
  for (auto& waiter : salt_waiters_) {
    std::string behind;
    // A router left out lately may still write the sub-keys: its lease and a margin first.
    for (const auto& gone : view.departed)
      behind += (behind.empty() ? "" : ", ") + gone.name + " (its lease expired lately)";
    bool self_seen = false;
    for (const auto& router : view.routers) {
      self_seen =
          self_seen || (router.name == fleet_->router_name() && router.lease == fleet_->lease());
      if (router.salting_version < waiter.version)
        behind += (behind.empty() ? "" : ", ") + router.name;
    }
    if (!self_seen) behind += (behind.empty() ? "" : ", ") + fleet_->router_name();
    if (behind.empty()) {
      waiter.done({});
    } else if (now >= waiter.deadline) {
      waiter.done(fmt::format("routers {} have not taken salting version {} in time", behind,
                              waiter.version));
    } else {
      waiting.push_back(std::move(waiter));
    }
  }
  salt_waiters_ = std::move(waiting);
}

}  // namespace santral::router
