#include "router/resharding/move_driver.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "placement/change.h"
#include "placement/diff.h"
#include "protocol/errors.h"
#include "router/backend/draining_connections.h"
#include "router/resharding/key_conflict.h"
#include "router/resharding/move_sampler.h"
#include "router/resharding/moving_topology.h"

namespace santral::router {

namespace {

using Phase = MoveDocument::Phase;
constexpr unsigned kSamples = 200;
// How often a switch that waits for shards' proofs says so in the log.
constexpr auto kSwitchWatch = std::chrono::seconds(5);

// What a switch waits for: each connection given up on that its shard has not proven over.
std::string waiting_for_proof() {
  std::string text;
  for (const auto& d : DrainingConnections::everywhere()) {
    text += fmt::format(
        "{}shard '{}' ({}) to prove that connection {} runs nothing more ({} ms ago: {}{}{})",
        text.empty() ? "" : "; ", d.shard, d.address, d.client_id,
        std::chrono::duration_cast<std::chrono::milliseconds>(d.age).count(), d.why,
        d.problem.empty() ? "" : "; ", d.problem);
  }
  return text;
}

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

struct MoveDriver::Move {
  LedgerMove record;
  placement::TopologyPtr from, to;  // the maps the keys leave and reach
  placement::TopologyPtr moving;    // in force for `applied` (either direction)
  std::uint64_t applied = 0;        // the epoch whose topology this router has taken
  std::uint64_t switched = 0;       // ... and waited out its requests routed before
  std::uint64_t released = 0;       // the epoch whose pulls run here
  std::uint64_t asked_release = 0;  // coordinator: the epoch whose release is on its way
  std::uint64_t walked = 0;         // coordinator: the epoch whose walk is done
  bool ending = false;              // coordinator: the ledger's last write is on its way
  std::unique_ptr<Mover> mover;     // coordinator: the walk
  std::uint64_t mover_epoch = 0;
  std::chrono::steady_clock::time_point started{};       // when this router first switched
  std::chrono::steady_clock::time_point switch_began{};  // ... and to the latest epoch
  std::vector<UnitProgress> estimates;  // what sampling the sources found, per unit
  std::function<void()> stop_sampling;

  ~Move() {
    if (stop_sampling) stop_sampling();
    if (mover) mover->stop();
  }
  const MoveDocument& document() const { return record.document; }
  bool back() const { return document().phase == Phase::Aborting; }
};

MoveDriver::MoveDriver(boost::asio::io_context& io, MoveHost& host, MoveLedger& ledger,
                       std::string who)
    : io_(io), host_(host), ledger_(ledger), who_(std::move(who)), switch_watch_(io) {}

MoveDriver::~MoveDriver() = default;

void MoveDriver::plan(const placement::TopologyPtr& to, std::string to_text,
                      std::function<void(bool ok, std::string message)> done) {
  if (under_way())
    return done(false, protocol::error_message(protocol::ClientError::ReshardBusy,
                                               reshard_state_name(state())));
  auto from = host_.serving();
  auto units = placement::moving_units(*from->map, *to->map).size();
  auto change = placement::compare_placement(*from->map, *to->map).summary();
  bool approved = to->config->resharding.auto_approve;
  MoveDocument document;
  document.phase = approved ? Phase::Moving : Phase::Planned;
  document.from_version = static_cast<std::int64_t>(from->map_version);
  document.from_text = ledger_.in_force_text();
  document.to_text = std::move(to_text);
  document.proposed_by = who_;
  ledger_.propose(std::move(document), [done = std::move(done), units, approved,
                                        change](const std::string& error) {
    if (!error.empty()) return done(false, error);
    std::string plural = units == 1 ? "" : "s";
    done(true, approved ? fmt::format("the new map moves keys: moving {} unit{} "
                                      "(resharding.auto_approve) ({})",
                                      units, plural, change)
                        : fmt::format("the new map moves keys: planned a move of {} unit{}; the "
                                      "old map keeps serving until SANTRAL RESHARD APPROVE "
                                      "(SANTRAL RESHARD PLAN shows it) ({})",
                                      units, plural, change));
  });
}

void MoveDriver::approve(Done done) {
  ledger_.approve(std::move(done));
}

void MoveDriver::abort(Done done) {
  ledger_.abort(std::move(done));
}

// A record the ledger holds: a new move is estimated; an epoch this router has not taken is
// switched to; a release is taken; the coordinator goes on.
void MoveDriver::take(const std::optional<LedgerMove>& record) {
  if (!record) return ended();
  if (move_ && move_->record.id == record->id && record->revision < move_->record.revision)
    return;  // an older read
  bool fresh = !move_ || move_->record.id != record->id ||
               move_->document().from_text != record->document.from_text ||
               move_->document().to_text != record->document.to_text;
  if (fresh) start(*record);
  if (!move_) return;
  move_->record = *record;
  const auto& document = move_->document();
  if (document.phase != Phase::Planned && document.epoch > move_->applied)
    switch_to(document.epoch);
  take_release();
  advance();
}

// A move this router has not seen: its maps, and an estimate of what it carries.
void MoveDriver::start(const LedgerMove& record) {
  std::string error;
  auto from = host_.topology_of(record.document.from_text, error);
  auto to = from ? host_.topology_of(record.document.to_text, error) : nullptr;
  if (!to) {
    spdlog::error("resharding: refusing the move recorded by {}: {}", record.document.proposed_by,
                  error);
    return;
  }
  // The sub-keys of salted counters keep the names they have.
  from->salt_naming = host_.serving()->salt_naming;
  to->salt_naming = from->salt_naming ? from->salt_naming : from->map;
  move_ = std::make_unique<Move>();
  move_->record = record;
  move_->from = from;
  move_->to = to;
  for (auto& unit : placement::moving_units(*from->map, *to->map))
    move_->estimates.push_back({std::move(unit)});
  auto probe = moving_topology(*from, *to, 0, 0);
  auto id = record.id;
  move_->stop_sampling = sample_move(
      io_, probe, move_->estimates, kSamples, [this, id](std::vector<UnitProgress> units) {
        if (!move_ || move_->record.id != id) return;  // another move meanwhile
        for (std::size_t i = 0; i < units.size() && i < move_->estimates.size(); ++i) {
          move_->estimates[i].keys_estimated = units[i].keys_estimated;
          move_->estimates[i].bytes_estimated = units[i].bytes_estimated;
        }
        spdlog::info("resharding: {}", describe_plan(status()));
      });
  spdlog::info("resharding: a move is {} (proposed by {}); {}", phase_name(record.document.phase),
               record.document.proposed_by, describe_plan(status()));
}

// Every worker takes the epoch's moving topology and holds its pulls; once what they sent
// the old way is answered, this router acknowledges the epoch.
void MoveDriver::switch_to(std::uint64_t epoch) {
  auto& move = *move_;
  // The walk of an earlier direction stops before anything of this one is acknowledged, and
  // the batch it has in flight is waited for (its MIGRATE landing after the release could
  // carry an old value over a new write).
  auto waits = std::make_shared<int>(1);
  if (move.mover && move.mover_epoch != epoch) {
    ++*waits;
    std::shared_ptr<Mover> old(std::move(move.mover));
    move.mover_epoch = 0;
    old->stop([this, old, waits, id = move.record.id, epoch]() mutable {
      boost::asio::post(io_, [old = std::move(old)] {});  // destroyed outside its callback
      if (--*waits == 0) switched(id, epoch);
    });
  }
  bool back = move.back();
  auto moving = std::make_shared<placement::Topology>(*moving_topology(
      back ? *move.to : *move.from, back ? *move.from : *move.to, host_.next_version(), epoch));
  moving->map_version = host_.serving()->map_version;
  move.moving = moving;
  if (move.applied == 0) move.started = std::chrono::steady_clock::now();
  move.applied = epoch;
  move.switch_began = std::chrono::steady_clock::now();
  spdlog::info(
      "resharding: switching to epoch {} of the move ({}); requests for its keys wait until "
      "every router has switched",
      epoch, phase_name(move.document().phase));
  auto id = move.record.id;
  host_.switch_topology(moving, [this, id, epoch, waits] {
    if (--*waits == 0) switched(id, epoch);
  });
  watch_switch(id, epoch);
}

// A switch that waits (a stalled shard has not proven that a request given up on will not run
// late) says what for, every few seconds, until it is done.
void MoveDriver::watch_switch(std::int64_t id, std::uint64_t epoch) {
  switch_watch_.expires_after(kSwitchWatch);
  switch_watch_.async_wait([this, id, epoch](boost::system::error_code ec) {
    if (ec || !move_ || move_->record.id != id || move_->applied != epoch ||
        move_->switched == epoch)
      return;
    auto waiting = waiting_for_proof();
    spdlog::warn(
        "resharding: the switch to epoch {} has waited {:.0f} s{}{}", epoch,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - move_->switch_began)
            .count(),
        waiting.empty() ? " for the routers' requests sent the old way" : " for ", waiting);
    watch_switch(id, epoch);
  });
}

// Every worker has switched to `epoch` and waited out what it sent before (and the walk of
// the earlier direction is stopped): this router acknowledges it.
void MoveDriver::switched(std::int64_t id, std::uint64_t epoch) {
  if (!move_ || move_->record.id != id || move_->applied != epoch) return;
  move_->switched = epoch;
  ledger_.acknowledge(id, epoch);
  take_release();
  advance();
}

// Every router has switched to the epoch: this router's pulls run.
void MoveDriver::take_release() {
  if (!move_) return;
  auto& move = *move_;
  if (move.switched == 0 || move.switched != move.document().epoch) return;
  if (move.document().released < move.switched || move.released >= move.switched) return;
  move.released = move.switched;
  host_.release_pulls();
  spdlog::info("resharding: every router has switched to epoch {}; its keys move", move.released);
}

void MoveDriver::coordinate(bool mine) {
  coordinating_ = mine;
  if (!mine && move_ && move_->mover) {
    move_->mover->stop();
    move_->mover.reset();
    move_->mover_epoch = 0;
  }
  advance();
}

// The coordinator's part, run whenever something it waits for may have happened.
void MoveDriver::advance() {
  if (!move_ || !coordinating_) return;
  auto& move = *move_;
  const auto& document = move.document();
  if (document.phase == Phase::Planned || move.ending) return;
  auto epoch = document.epoch;
  if (document.released < epoch) {
    if (move.switched < epoch || move.asked_release == epoch) return;
    if (!ledger_.all_acknowledged(move.record.id, epoch)) return;  // the old way still
    move.asked_release = epoch;
    LedgerMove released = move.record;
    released.document.released = epoch;
    auto id = move.record.id;
    ledger_.release(released, [this, id, epoch](const std::string& error) {
      if (error.empty() || !move_ || move_->record.id != id) return;
      if (move_->asked_release == epoch) move_->asked_release = 0;
      spdlog::warn("resharding: releasing epoch {}: {}", epoch, error);
    });
    return;
  }
  if (move.released < epoch) return;
  if (move.walked == epoch) return walked(epoch);  // the ledger's last write failed: again
  if (move.mover && move.mover_epoch == epoch) {
    ledger_.report_walk(move.mover->progress().keys_moved);
    return;
  }
  if (move.mover) move.mover->stop();
  spdlog::info("resharding: walking the shards (epoch {})", epoch);
  auto id = move.record.id;
  // Posted: ending the move may destroy the mover, whose callback this is.
  move.mover = std::make_unique<Mover>(io_, move.moving, host_.migrations(), [this, id, epoch] {
    boost::asio::post(io_, [this, id, epoch] {
      if (move_ && move_->record.id == id) walked(epoch);
    });
  });
  move.mover_epoch = epoch;
  ledger_.report_walk(0);
  move.mover->start();
}

// Nothing is left on the sources: the ledger makes the destination (or, aborted, the origin)
// the map in force and the move ends.
void MoveDriver::walked(std::uint64_t epoch) {
  auto& move = *move_;
  if (move.document().epoch != epoch || !coordinating_ || move.ending) return;
  if (move.walked != epoch && move.mover) ledger_.report_walk(move.mover->progress().keys_moved);
  move.walked = epoch;
  move.ending = true;
  auto id = move.record.id;
  bool back = move.back();
  ledger_.finish(move.record, [this, id, back](const std::string& error) {
    if (move_ && move_->record.id == id) move_->ending = false;
    if (!error.empty()) return spdlog::warn("resharding: ending the move: {}; trying again", error);
    spdlog::info("resharding: {}",
                 back ? "aborted, every key is back" : "done, every key is on its new owner");
  });
}

void MoveDriver::set_aside() {
  if (!move_) return;
  spdlog::info("resharding: the fleet went on past the move proposed by {}; setting it aside",
               move_->document().proposed_by);
  last_ = status();
  last_.state = ReshardState::Idle;
  move_.reset();
}

// The ledger holds no move any more: the map in force serves alone, which is where the keys
// are ("pull, then run" stays correct for requests still routed the moving way: nothing is
// left to pull).
void MoveDriver::ended() {
  if (move_) {
    last_ = status();
    last_.state = ReshardState::Idle;
    for (auto& unit : last_.units) unit.done = true;
  }
  move_.reset();
  auto current = host_.serving();  // a copy: switch_topology replaces it
  if (!current->move) return;
  std::string error;
  auto alone = host_.topology_of(ledger_.in_force_text(), error);
  if (!alone) {
    spdlog::error("resharding: the map in force does not load any more: {}", error);
    return;
  }
  alone->version = host_.next_version();
  alone->map_version = current->map_version;
  alone->move = nullptr;
  alone->salt_naming = current->salt_naming;
  spdlog::info("resharding: the move has ended; version {} of the map is in force",
               alone->shown_version());
  host_.switch_topology(alone, [] {});
}

ReshardState MoveDriver::state() const {
  if (!move_) return ReshardState::Idle;
  if (move_->walked != 0 && move_->walked == move_->document().epoch)
    return ReshardState::Finishing;
  return state_of(move_->document().phase);
}

ReshardStatus MoveDriver::status() const {
  if (!move_) {
    ReshardStatus status = last_;
    status.map_version = host_.serving()->shown_version();
    status.conflicts = move_conflicts();
    return status;
  }
  const auto& move = *move_;
  ReshardStatus status;
  status.state = state();
  status.conflicts = move_conflicts();
  if (move.applied != 0 && move.switched != move.applied) status.waiting_for = waiting_for_proof();
  status.map_version = host_.serving()->shown_version();
  status.units = move.estimates;
  if (move.applied != 0)
    status.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - move.started).count();
  status.keys_moved = ledger_.walk_reported(move.record.id);
  if (move.mover) {
    const auto& progress = move.mover->progress();
    status.keys_moved = std::max(status.keys_moved, progress.keys_moved);
    status.bytes_moved = progress.bytes_moved;
    status.errors = progress.errors;
    status.last_error = progress.last_error;
    status.largest_key_bytes = progress.largest_key_bytes;
    // A unit is done once the walk of its source is.
    if (status.state == ReshardState::Moving)
      for (auto& unit : status.units)
        for (std::size_t s = 0; s < move.moving->map->shard_count(); ++s)
          if (move.moving->map->shard(s).name == unit.unit.from)
            unit.done = move.mover->source_done(s);
  }
  if (status.state == ReshardState::Finishing)
    for (auto& unit : status.units) unit.done = !move.back();
  if (status.elapsed_s > 0) status.keys_per_sec = double(status.keys_moved) / status.elapsed_s;
  auto estimated = status.keys_estimated();
  if (status.keys_per_sec > 0 && estimated > status.keys_moved)
    status.eta_s = double(estimated - status.keys_moved) / status.keys_per_sec;
  return status;
}

}  // namespace santral::router
