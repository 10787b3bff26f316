// A move across a fleet (router/cluster/move_document.h), on stock Redis like a single
// router's (router/resharding/), with etcd in the middle:
//
//   any router: a map that moves keys ──► move document, planned
//   any router: APPROVE ──► moving, epoch 1 (ABORT later: aborting, epoch 2)
//   every router: switches to the epoch's moving topology, holds its pulls, waits out what it
//                 sent the old way, acknowledges the epoch (its registration's move_epoch)
//   coordinator: every live router acknowledged ──► released = epoch
//   every router: pulls run; coordinator: walks the sources (Mover)
//   coordinator: walk done ──► map := destination, move document deleted (one transaction)
//   every router: the destination alone ("pull, then run" holds: nothing is left to pull)
//
// A router that does not confirm its lease stops reaching the shards before the others may
// leave it out (SharedState::fleet_serve_until_ns), so that no router left out writes with an
// old map. The coordinator is whoever holds /santral/<name>/coordinator on its lease; when it
// dies another takes the key and walks again (MIGRATE moves what is still there, once).
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "config/config_error.h"
#include "config/placement_diff.h"
#include "config/shared_map.h"
#include "protocol/errors.h"
#include "router/cluster/map_document.h"
#include "router/process/fan_out.h"
#include "router/process/fence.h"
#include "router/process/server.h"
#include "router/resharding/move_sampler.h"
#include "router/resharding/moving_topology.h"

namespace santral::router {

namespace {

using Phase = MoveDocument::Phase;
using Compare = EtcdClient::Compare;

ReshardState state_of(Phase phase) {
  switch (phase) {
    case Phase::Planned:
      return ReshardState::Planned;
    case Phase::Moving:
      return ReshardState::Moving;
    case Phase::Aborting:
      return ReshardState::Aborting;
  }
  return ReshardState::Idle;
}

}  // namespace

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
  return std::make_shared<config::Topology>(*config::make_topology(std::move(next), 0));
}

void Server::propose_move(const std::string& to_text, std::function<void(ReloadResult)> done) {
  auto fail = [&](const std::string& why) {
    if (done) done({false, protocol::error_message(protocol::ClientError::MapProposal, why)});
  };
  if (fleet_move_.document)
    return fail(
        fmt::format("a move is already {} (SANTRAL RESHARD STATUS); wait for it or "
                    "ABORT it first",
                    phase_name(fleet_move_.document->phase)));
  std::string error;
  auto to = fleet_topology(to_text, error);
  if (!to) return fail(error);
  auto units = config::moving_units(*topology_->map, *to->map).size();
  MoveDocument move;
  bool approved = to->config->resharding.auto_approve;
  move.phase = approved ? Phase::Moving : Phase::Planned;
  move.epoch = approved ? 1 : 0;
  move.from_version = static_cast<std::int64_t>(topology_->map_version);
  move.from_text = fleet_map_text_;
  move.to_text = to_text;
  move.proposed_by = fleet_->router_name();
  std::string document = encode_move(move);
  std::string move_key = fleet_->move_key(), map_key = fleet_->map_key();
  auto from_version = move.from_version;
  fleet_->call(
      [document, move_key, map_key, from_version](EtcdClient& etcd, std::int64_t& revision) {
        auto written = etcd.txn({{move_key, Compare::Target::ModRevision, 0, {}},
                                 {map_key, Compare::Target::ModRevision, from_version, {}}},
                                {{move_key, document, 0}}, {});
        if (!written)
          return std::string(
              "another move was planned or the map changed meanwhile; look at SANTRAL RESHARD "
              "STATUS and SANTRAL SHARDMAP, then propose again");
        revision = *written;
        return std::string();
      },
      [this, done = std::move(done), units, approved](std::int64_t, const std::string& error) {
        ReloadResult result;
        if (!error.empty()) {
          result = {false, protocol::error_message(protocol::ClientError::MapProposal, error)};
        } else if (approved) {
          result = {true, fmt::format("the new map moves keys: moving {} unit{} across fleet "
                                      "'{}' (resharding.auto_approve)",
                                      units, units == 1 ? "" : "s", fleet_->settings().name)};
        } else {
          result = {true,
                    fmt::format("the new map moves keys: planned a move of {} unit{} across fleet "
                                "'{}'; the old map keeps serving until SANTRAL RESHARD APPROVE "
                                "through any router",
                                units, units == 1 ? "" : "s", fleet_->settings().name)};
        }
        spdlog::info("fleet '{}': {}", fleet_->settings().name, result.message);
        if (done) done(std::move(result));
      });
}

void Server::take_fleet_move(const std::optional<EtcdKeyValue>& kv) {
  if (!kv) return end_fleet_move();
  auto& move = fleet_move_;
  std::string error;
  auto document = decode_move(kv->key, kv->value, error);
  if (!document) {
    spdlog::error("fleet '{}': refusing the move document: {}", fleet_->settings().name, error);
    return;
  }
  if (kv->mod_revision < move.revision) return;  // an older read
  bool new_move = !move.document || move.document->from_text != document->from_text ||
                  move.document->to_text != document->to_text;
  if (new_move) {
    auto from = fleet_topology(document->from_text, error);
    auto to = from ? fleet_topology(document->to_text, error) : nullptr;
    if (!to) {
      spdlog::error("fleet '{}': refusing the move document: {}", fleet_->settings().name, error);
      return;
    }
    from->salt_naming = topology_->salt_naming;
    // The sub-keys of salted counters keep the names they have.
    to->salt_naming = from->salt_naming ? from->salt_naming : from->map;
    if (move.stop_sampling) move.stop_sampling();
    move = {};
    move.from = from;
    move.to = to;
    move.coordinating = fleet_move_coordinating_;
    // Every router estimates what the move carries, as a single router's plan does.
    for (auto& unit : config::moving_units(*from->map, *to->map))
      move.estimates.push_back({std::move(unit)});
    auto probe = moving_topology(*from, *to, 0, 0);
    move.stop_sampling =
        sample_move(io_, probe, move.estimates, 200, [this, to](std::vector<UnitProgress> units) {
          if (fleet_move_.to != to) return;  // another move meanwhile
          fleet_move_.estimates = std::move(units);
        });
    spdlog::info("fleet '{}': a move is {} (proposed by {})", fleet_->settings().name,
                 phase_name(document->phase), document->proposed_by);
  }
  move.document = document;
  move.revision = kv->mod_revision;
  if (kv->create_revision != 0) move.id = kv->create_revision;
  auto epoch = document->epoch;
  if (document->phase != Phase::Planned && epoch > move.applied) {
    bool back = document->phase == Phase::Aborting;
    auto moving = std::make_shared<config::Topology>(*moving_topology(
        back ? *move.to : *move.from, back ? *move.from : *move.to, next_version(), epoch));
    moving->map_version = topology_->map_version;
    move.moving = moving;
    if (move.applied == 0) move.started = std::chrono::steady_clock::now();
    move.applied = epoch;
    topology_ = moving;
    shared_.topology_version = moving->version;
    spdlog::info(
        "fleet '{}': switching to epoch {} of the move ({}); requests for its keys wait "
        "until every router has switched",
        fleet_->settings().name, epoch, phase_name(document->phase));
    fence_workers(
        io_, worker_list(), {}, [moving](Worker& worker) { worker.apply(moving); },
        [this, epoch] {
          if (!fleet_move_.document || fleet_move_.applied != epoch) return;
          fleet_move_.switched = epoch;
          fleet_->acknowledge_move(fleet_move_.id, epoch);
          take_fleet_move_release();
          drive_move();
        });
  }
  take_fleet_move_release();
  drive_move();
}

// Every router has switched to the epoch: this router's pulls run.
void Server::take_fleet_move_release() {
  auto& move = fleet_move_;
  if (!move.document || move.switched != move.document->epoch) return;
  if (move.document->released < move.switched || move.released >= move.switched) return;
  move.released = move.switched;
  post_to_each<Worker>(worker_list(), [](Worker& worker) { worker.release_moves(); });
  spdlog::info("fleet '{}': every router has switched to epoch {}; its keys move",
               fleet_->settings().name, move.released);
  drive_move();
}

void Server::coordinate(bool mine) {
  fleet_move_coordinating_ = mine;
  fleet_move_.coordinating = mine;
  if (!mine && fleet_move_.mover) {
    fleet_move_.mover->stop();
    fleet_move_.mover.reset();
    fleet_move_.mover_epoch = 0;
  }
  drive_move();
}

// The coordinator's part, run whenever something it waits for may have happened.
void Server::drive_move() {
  auto& move = fleet_move_;
  if (!fleet_ || !move.coordinating || !move.document || move.ending) return;
  const auto& document = *move.document;
  if (document.phase == Phase::Planned) return;
  auto epoch = document.epoch;
  if (document.released < epoch) {
    if (move.switched < epoch || move.asked_release == epoch) return;
    auto view = fleet_->view();
    for (const auto& router : view.routers)
      if (router.move_id != move.id || router.move_epoch < epoch) return;  // the old way still
    MoveDocument released = document;
    released.released = epoch;
    move.asked_release = epoch;
    std::string text = encode_move(released), key = fleet_->move_key();
    std::string holder = fleet_->coordinator_key(), me = fleet_->router_name();
    auto revision = move.revision;
    fleet_->call(
        [text, key, holder, me, revision](EtcdClient& etcd, std::int64_t& made) {
          auto written = etcd.txn({{key, Compare::Target::ModRevision, revision, {}},
                                   {holder, Compare::Target::Value, 0, me}},
                                  {{key, text, 0}}, {});
          if (!written) return std::string("the move changed meanwhile");
          made = *written;
          return std::string();
        },
        [this, epoch, text, key](std::int64_t made, const std::string& error) {
          if (!error.empty()) {
            if (fleet_move_.asked_release == epoch) fleet_move_.asked_release = 0;
            spdlog::warn("fleet '{}': releasing epoch {}: {}", fleet_->settings().name, epoch,
                         error);
            return;
          }
          take_fleet_move(EtcdKeyValue{key, text, fleet_move_.id, made, 0});
        });
    return;
  }
  if (move.released < epoch) return;
  if (move.walked == epoch) return move_walked(epoch);  // its last write failed: again
  if (move.mover && move.mover_epoch == epoch) return;
  if (move.mover) move.mover->stop();
  spdlog::info("fleet '{}': coordinating the move: walking the shards (epoch {})",
               fleet_->settings().name, epoch);
  move.mover = std::make_unique<Mover>(io_, move.moving, [this, epoch] { move_walked(epoch); });
  move.mover_epoch = epoch;
  fleet_->report_walk(0);
  move.mover->start();
}

// Nothing is left on the sources: the destination map is the fleet's map, and the move ends.
void Server::move_walked(std::uint64_t epoch) {
  auto& move = fleet_move_;
  if (!move.document || move.document->epoch != epoch || !move.coordinating || move.ending) return;
  move.walked = epoch;
  move.ending = true;
  bool back = move.document->phase == Phase::Aborting;
  std::vector<Compare> compares = {
      {fleet_->move_key(), Compare::Target::ModRevision, move.revision, {}},
      {fleet_->coordinator_key(), Compare::Target::Value, 0, fleet_->router_name()}};
  std::vector<EtcdClient::Put> puts;
  if (!back) {
    compares.push_back(
        {fleet_->map_key(), Compare::Target::ModRevision, move.document->from_version, {}});
    puts.push_back(
        {fleet_->map_key(),
         encode_map({move.document->to_text, fleet_->router_name(), move.document->from_version}),
         0});
  }
  std::vector<std::string> deletes = {fleet_->move_key()};
  fleet_->call(
      [compares, puts, deletes](EtcdClient& etcd, std::int64_t& made) {
        auto written = etcd.txn(compares, puts, deletes);
        if (!written) return std::string("the move or the map changed meanwhile");
        made = *written;
        return std::string();
      },
      [this, back, epoch](std::int64_t made, const std::string& error) {
        fleet_move_.ending = false;
        if (!error.empty()) {
          spdlog::warn("fleet '{}': ending the move: {}; trying again", fleet_->settings().name,
                       error);
          return;
        }
        spdlog::info(
            "fleet '{}': the move {} (version {}); every router takes it at its next "
            "read of etcd",
            fleet_->settings().name,
            back ? "was aborted, every key is back" : "is done, every key is on its new owner",
            made);
        (void)epoch;
      });
}

// The move document is gone: the move ended (or was dropped while planned).
void Server::end_fleet_move() {
  auto& move = fleet_move_;
  if (move.document) {
    fleet_last_move_ = fleet_move_status();
    fleet_last_move_.state = ReshardState::Idle;
  }
  if (move.stop_sampling) move.stop_sampling();
  if (move.mover) move.mover->stop();
  bool moving_here = topology_->move != nullptr;
  move = {};
  move.coordinating = fleet_move_coordinating_;
  if (!moving_here) return;
  // Aborted (or the destination map not read yet): the map in force alone, which is where the
  // keys went. A map read later replaces it as any map does.
  std::string error;
  auto alone = fleet_topology(fleet_map_text_, error);
  if (!alone) {
    spdlog::error("fleet '{}': the map in force does not load any more: {}",
                  fleet_->settings().name, error);
    return;
  }
  alone->version = next_version();
  alone->map_version = topology_->map_version;
  alone->salt_naming = topology_->salt_naming;
  spdlog::info("fleet '{}': the move has ended; serving map version {}", fleet_->settings().name,
               alone->map_version);
  switch_topology(alone, [] {});
}

ReshardStatus Server::fleet_move_status() const {
  const auto& move = fleet_move_;
  ReshardStatus status = move.document ? ReshardStatus{} : fleet_last_move_;
  status.map_version = topology_->shown_version();
  if (!move.document) return status;
  status.state = state_of(move.document->phase);
  if (move.applied != 0)
    status.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - move.started).count();
  status.units = move.estimates;
  // The coordinator's walk, as its registration says (or as it is, here).
  for (const auto& router : fleet_->view().routers)
    if (router.move_id == move.id)
      status.keys_moved = std::max(status.keys_moved, router.keys_moved);
  if (move.mover) {
    const auto& progress = move.mover->progress();
    status.keys_moved = progress.keys_moved;
    status.bytes_moved = progress.bytes_moved;
    status.errors = progress.errors;
    status.last_error = progress.last_error;
    status.largest_key_bytes = progress.largest_key_bytes;
    for (auto& unit : status.units)
      for (std::size_t s = 0; s < move.moving->map->shard_count(); ++s)
        if (move.moving->map->shard(s).name == unit.unit.from)
          unit.done = move.mover->source_done(s);
  }
  if (status.elapsed_s > 0) status.keys_per_sec = double(status.keys_moved) / status.elapsed_s;
  auto estimated = status.keys_estimated();
  if (status.keys_per_sec > 0 && estimated > status.keys_moved)
    status.eta_s = double(estimated - status.keys_moved) / status.keys_per_sec;
  return status;
}

// SANTRAL RESHARD in a fleet: APPROVE and ABORT change the move document (any router may);
// PLAN and STATUS say what it holds, with the walk's figures on the coordinator.
void Server::fleet_reshard(ReshardVerb verb, std::function<void(ReshardAnswer)> done) {
  if (verb == ReshardVerb::Plan || verb == ReshardVerb::Status)
    return done({{}, fleet_move_status()});
  bool approve = verb == ReshardVerb::Approve;
  auto written = std::make_shared<std::string>();
  std::string key = fleet_->move_key();
  fleet_->call(
      [key, approve, written](EtcdClient& etcd, std::int64_t& made) {
        auto current = etcd.range(key);
        if (current.kvs.empty())
          return approve ? protocol::error_message(protocol::ClientError::ReshardNothingPlanned)
                         : protocol::error_message(protocol::ClientError::ReshardNotMoving, "idle");
        const auto& kv = current.kvs.front();
        std::string error;
        auto move = decode_move(key, kv.value, error);
        if (!move) return "ERR santral: " + error;
        std::vector<EtcdClient::Put> puts;
        std::vector<std::string> deletes;
        if (approve) {
          if (move->phase != Phase::Planned)
            return protocol::error_message(protocol::ClientError::ReshardBusy,
                                           phase_name(move->phase));
          move->phase = Phase::Moving;
          move->epoch = 1;
        } else if (move->phase == Phase::Planned) {
          deletes.push_back(key);
        } else if (move->phase == Phase::Moving) {
          move->phase = Phase::Aborting;
          move->epoch += 1;
        } else {
          return protocol::error_message(protocol::ClientError::ReshardNotMoving,
                                         phase_name(move->phase));
        }
        if (deletes.empty()) {
          *written = encode_move(*move);
          puts.push_back({key, *written, 0});
        }
        auto result =
            etcd.txn({{key, Compare::Target::ModRevision, kv.mod_revision, {}}}, puts, deletes);
        if (!result) return std::string("ERR santral: the move changed meanwhile; try again");
        made = *result;
        return std::string();
      },
      [this, key, written, done = std::move(done)](std::int64_t made, const std::string& error) {
        ReshardAnswer answer;
        answer.error = error;
        // Taken at once when this router knows the move already; else its next read of
        // etcd brings it whole.
        if (error.empty()) {
          if (written->empty())
            take_fleet_move(std::nullopt);
          else if (fleet_move_.document)
            take_fleet_move(EtcdKeyValue{key, *written, fleet_move_.id, made, 0});
        }
        answer.status = fleet_move_status();
        done(std::move(answer));
      });
}

}  // namespace santral::router
