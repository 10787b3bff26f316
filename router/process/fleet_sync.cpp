// The server's side of a fleet (`cluster:`): the map in force comes from etcd, and reloads
// and SANTRAL MAP PUSH propose the next one there (router/cluster/).
#include "router/process/fleet_sync.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "config/config_error.h"
#include "config/shared_map.h"
#include "placement/change.h"
#include "placement/diff.h"
#include "protocol/errors.h"
#include "router/backend/lease_clock.h"
#include "router/backend/sentinel_lookup.h"
#include "router/cluster/map_document.h"
#include "router/hotkeys/salting/salt_overrides_json.h"

namespace santral::router {

namespace asio = boost::asio;

FleetSync::FleetSync(asio::io_context& io, RouterHost& host, SharedState& shared, FleetStart& start)
    : io_(io),
      host_(host),
      shared_(shared),
      agent_(std::move(start.agent)),
      start_map_version_(start.map_version),
      map_text_(std::move(start.map_text)),
      naming_text_(std::move(start.salt_naming_text)),
      file_map_text_(std::move(start.file_map_text)),
      joined_move_(std::move(start.move)) {
  // In a fleet a move lives in etcd; a state file left by this router running alone is not
  // the fleet's (etcd's map is in force).
  ledger_ = std::make_unique<FleetLedger>(
      *agent_, [this] { return map_text_; }, [this] { return naming_text_; });
  ledger_->on_change([this](const std::optional<LedgerMove>& move) { offer_move(move); });
  if (start.salting) {
    // The fleet's run-time salting outlives any one router: it is taken before serving.
    auto decoded = decode_salt_overrides("etcd key " + start.salting->key, start.salting->value);
    if (decoded.overrides)
      shared_.salt_overrides = decoded.overrides;
    else
      spdlog::error("fleet: refusing the run-time salting in etcd: {}", decoded.error);
    agent_->acknowledge_salting(start.salting->mod_revision);
  }
}

placement::TopologyPtr FleetSync::first_topology(const placement::TopologyPtr& file) const {
  auto in_fleet = std::make_shared<placement::Topology>(*file);
  in_fleet->map_version = start_map_version_;
  if (!naming_text_.empty()) {
    // Salted counters are named as every router of the fleet names them (map_document.h).
    std::string error;
    auto naming = topology_of(naming_text_, error);
    if (naming)
      in_fleet->salt_naming = naming->map;
    else
      spdlog::error("fleet: the map salted counters are named by does not load: {}", error);
  }
  return in_fleet;
}

void FleetSync::start(std::function<void(const EtcdKeyValue&)> salting,
                      std::function<void()> tick) {
  agent_->start(io_,
                {[this](const EtcdKeyValue& map) { take_map(map); }, std::move(salting),
                 [this, tick = std::move(tick)] {
                   tick();
                   driver_->advance();
                 },
                 [this](const std::optional<EtcdKeyValue>& move) { take_move(move); },
                 [this](bool mine) { driver_->coordinate(mine); },
                 [this](std::function<void()> confirm) { rejoin(std::move(confirm)); }},
                &shared_.fleet_serve_until_ns);
  if (joined_move_) take_move(std::exchange(joined_move_, std::nullopt));
}

void FleetSync::stop() {
  agent_->stop();
}

// It serves again once it serves the version etcd holds (take_map confirms when it takes it);
// the workers' queues hold the topology taken meanwhile ahead of the barrier.
void FleetSync::rejoin(std::function<void()> confirm) {
  if (static_cast<std::int64_t>(host_.serving()->map_version) != agent_->seen_map_version()) {
    spdlog::warn(
        "fleet '{}': back with map version {} while etcd holds {}; not serving until it serves "
        "that one",
        agent_->settings().name, host_.serving()->map_version, agent_->seen_map_version());
    rejoin_ = std::move(confirm);
    return;
  }
  host_.barrier_all(std::move(confirm));
}

bool FleetSync::file_map_is_new(const std::string& file_map) {
  bool news = !file_map.empty() && file_map != file_map_text_ && file_map != map_text_;
  if (!file_map.empty()) file_map_text_ = file_map;
  return news;
}

FleetView FleetSync::view() const {
  return agent_->view();
}

std::optional<ControlPlane::Unready> FleetSync::unready() const {
  using protocol::ClientError;
  using protocol::error_message;
  auto until = shared_.fleet_serve_until_ns.load(std::memory_order_relaxed);
  if (until == 0)
    return ControlPlane::Unready{"out_of_touch", error_message(ClientError::ProbeNotJoined)};
  if (auto late_ns = lease_clock_ns() - until; late_ns > 0)
    return ControlPlane::Unready{"out_of_touch",
                                 error_message(ClientError::ProbeOutOfTouch, late_ns / 1'000'000)};
  if (auto refused = shared_.fleet_map_refused.load(std::memory_order_relaxed))
    return ControlPlane::Unready{"refusing_map",
                                 error_message(ClientError::ProbeMapRefused, refused)};
  auto fleets = agent_->seen_map_version();
  auto serving = static_cast<std::int64_t>(host_.serving()->map_version);
  if (fleets != 0 && fleets != serving)
    return ControlPlane::Unready{"map_behind",
                                 error_message(ClientError::ProbeMapBehind, serving, fleets)};
  return std::nullopt;
}

FleetSync::FleetMap FleetSync::fleet_map(const std::string& key,
                                         const std::string& document) const {
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
                decoded.based_on != static_cast<std::int64_t>(host_.serving()->map_version));
  if (!decoded.shared) {
    out.error = decoded.error;
    return out;
  }
  config::Config next = *host_.serving()->config;
  config::adopt_shared_map(next, *decoded.shared);
  try {
    keep_sentinel_shards(next, *host_.serving()->config);
  } catch (const config::ConfigError& e) {
    out.error = fmt::format("etcd key {}: {}", key, e.what());
    return out;
  }
  auto made = std::make_shared<placement::Topology>(*placement::make_topology(std::move(next), 0));
  // Every router names salted counters by the map the document says, one that started after
  // the move that made it necessary too.
  if (!decoded.salt_naming.empty()) {
    std::string error;
    auto naming = topology_of(decoded.salt_naming, error);
    if (!naming) {
      out.error = fmt::format("etcd key {}: field salt_naming: {}", key, error);
      return out;
    }
    made->salt_naming = naming->map;
  }
  if (!out.missed && !placement::moving_units(*host_.serving()->map, *made->map).empty())
    out.error = fmt::format(
        "etcd key {}: field config: the map gives keys new owners ({}) without a move; propose "
        "it with `santral map push FILE` or a reload, which plans the move",
        key, placement::compare_placement(*host_.serving()->map, *made->map).summary());
  out.moves = !out.error.empty();
  out.topology = std::move(made);
  out.text = std::move(decoded.config_text);
  out.naming_text = std::move(decoded.salt_naming);
  out.pushed_by = std::move(decoded.pushed_by);
  return out;
}

std::vector<config::ShardConfig> shards_of(const placement::Topology& topology) {
  std::vector<config::ShardConfig> shards;
  for (const placement::ShardMap* map : {topology.map.get(), &topology.naming_map()})
    for (std::size_t i = 0; i < map->shard_count(); ++i) shards.push_back(map->shard(i));
  return shards;
}

// A map version read from etcd: every router takes it, the one that proposed it too.
void FleetSync::take_map(const EtcdKeyValue& map) {
  auto version = static_cast<std::uint64_t>(map.mod_revision);
  if (version == host_.serving()->map_version) return;
  std::string why = fmt::format("etcd (map version {})", version);
  auto next = fleet_map(map.key, map.value);
  if (!next.topology || next.moves) {
    // Where the fleet moved keys to a map this router cannot take, its own map no longer says
    // where they are: it serves nothing until it takes one (F14).
    bool stop = !next.topology && next.missed;
    spdlog::error(
        "fleet '{}': refusing map version {}: {}; {} version {}", agent_->settings().name, version,
        next.error,
        stop ? "the fleet's keys may have moved: serving nothing, not even" : "still serving",
        host_.serving()->map_version);
    // Logged before it takes effect: a client told CLUSTERDOWN finds the reason in the log.
    if (stop) shared_.fleet_map_refused.store(version, std::memory_order_relaxed);
    host_.remember_reload(why, {false, next.error});
    return;
  }
  shared_.fleet_map_refused.store(0, std::memory_order_relaxed);
  next.topology->version = host_.next_version();
  next.topology->map_version = version;
  auto change = placement::compare_placement(*host_.serving()->map, *next.topology->map);
  map_text_ = std::move(next.text);
  naming_text_ = std::move(next.naming_text);
  host_.put_in_force(next.topology);
  // The move that waited for this map starts before anything is served on it alone (a router
  // back from an outage serves again below, after the move's topology).
  if (waiting_move_ && waiting_move_->document.from_version == map.mod_revision)
    offer_move(std::exchange(waiting_move_, std::nullopt));
  waiting_move_.reset();  // one from an earlier map ended: the next read says what follows
  agent_->acknowledge(map.mod_revision);
  // Back from an outage: it serves again only once it serves the version etcd holds.
  if (rejoin_ &&
      static_cast<std::int64_t>(host_.serving()->map_version) == agent_->seen_map_version())
    host_.barrier_all(std::exchange(rejoin_, nullptr));
  std::string message = fmt::format(
      "version {} (pushed by {}): {} shard{}; {}", version,
      next.pushed_by.empty() ? "?" : next.pushed_by, host_.serving()->map->shard_count(),
      host_.serving()->map->shard_count() == 1 ? "" : "s", change.summary());
  spdlog::info("fleet '{}': serving map {}", agent_->settings().name, message);
  host_.remember_reload(why, {true, message});
}

void FleetSync::propose_map(const std::string& shared_text,
                            std::function<void(ControlPlane::ReloadResult)> done) {
  auto expected = static_cast<std::int64_t>(host_.serving()->map_version);
  std::string document =
      encode_map({shared_text, agent_->router_name(), 0, expected, naming_text_});
  if (driver_->under_way())
    return done({false, protocol::error_message(
                            protocol::ClientError::MapProposal,
                            fmt::format("a move is {} (SANTRAL RESHARD STATUS); propose once it "
                                        "has ended, or ABORT it first",
                                        reshard_state_name(driver_->state())))});
  // Checked here as every router will check it, so that a refused map never reaches etcd.
  auto checked = fleet_map(agent_->map_key(), document);
  // A map that moves keys is proposed as a move (it replaces a planned one).
  if (checked.moves)
    return driver_->plan(checked.topology, shared_text,
                         [this, done = std::move(done)](bool ok, std::string message) {
                           if (ok)
                             message += fmt::format(" across fleet '{}'", agent_->settings().name);
                           spdlog::info("fleet '{}': {}", agent_->settings().name, message);
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
  std::string map_key = agent_->map_key(), move_key = agent_->move_key();
  agent_->call(
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
        ControlPlane::ReloadResult result;
        if (!error.empty()) {
          result = {false, protocol::error_message(protocol::ClientError::MapProposal, error)};
          spdlog::error("fleet '{}': {}", agent_->settings().name, result.message);
        } else {
          result = {true, fmt::format("proposed map version {} to fleet '{}'; every router "
                                      "serves it once it reads it (SANTRAL ROUTERS shows "
                                      "their versions)",
                                      revision, agent_->settings().name)};
          spdlog::info("fleet '{}': {}", agent_->settings().name, result.message);
        }
        if (done) done(std::move(result));
      });
}

std::shared_ptr<placement::Topology> FleetSync::topology_of(const std::string& shared_text,
                                                            std::string& error) const {
  config::Config shared;
  try {
    shared = config::parse_config(shared_text, "etcd key " + agent_->move_key(),
                                  config::ConfigFormat::Santral);
  } catch (const config::ConfigError& e) {
    error = e.what();
    return nullptr;
  }
  config::Config next = *host_.serving()->config;
  config::adopt_shared_map(next, shared);
  try {
    keep_sentinel_shards(next, *host_.serving()->config);
  } catch (const config::ConfigError& e) {
    error = e.what();
    return nullptr;
  }
  return std::make_shared<placement::Topology>(*placement::make_topology(std::move(next), 0));
}

// The move document as etcd holds it: the move driver (router/resharding/move_driver.h)
// carries it out on this router.
void FleetSync::take_move(const std::optional<EtcdKeyValue>& kv) {
  if (!kv) return driver_->take(std::nullopt);
  std::string error;
  auto move = ledger_->read(*kv, error);
  if (!move)
    return spdlog::error("fleet '{}': refusing the move document: {}", agent_->settings().name,
                         error);
  offer_move(move);
}

// A move starts from a map version; a router that has not taken that map yet (its own APPROVE
// answered before its next read of etcd brought the map, or it is back from an outage) would
// switch to the move's epoch and then take the map the move starts from as a plain map over
// the move's topology. It waits for the map instead, and sets aside the move it was still
// carrying out (the fleet ended it: a later move starts from where it ended): that move's
// walk stops, and its topology stays in force until the map comes ("pull, then run" stays
// right for its keys).
void FleetSync::offer_move(const std::optional<LedgerMove>& move) {
  auto serving = static_cast<std::int64_t>(host_.serving()->map_version);
  if (move && move->document.from_version > serving) {
    if (!waiting_move_ || waiting_move_->id != move->id)
      spdlog::info(
          "fleet '{}': the move proposed by {} starts from map version {}; this router serves "
          "version {}: it takes that map first",
          agent_->settings().name, move->document.proposed_by, move->document.from_version,
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

void FleetSync::push_map(std::string text, std::function<void(ControlPlane::ReloadResult)> done) {
  asio::post(io_, [this, text = std::move(text), done = std::move(done)]() mutable {
    std::string shared;
    try {
      shared = config::shared_map_text(text, "SANTRAL MAP PUSH");
    } catch (const config::ConfigError& e) {
      return done({false, protocol::error_message(protocol::ClientError::MapProposal, e.what())});
    }
    propose_map(shared, std::move(done));
  });
}

}  // namespace santral::router
