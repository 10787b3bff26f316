#include "router/resharding/resharding.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "config/placement_diff.h"
#include "protocol/errors.h"
#include "router/resharding/move_sampler.h"
#include "router/resharding/moving_topology.h"

namespace santral::router {

namespace {

constexpr unsigned kSamples = 200;

std::vector<UnitProgress> units_of(const config::Topology& from, const config::Topology& to) {
  std::vector<UnitProgress> units;
  for (auto& unit : config::moving_units(*from.map, *to.map)) units.push_back({std::move(unit)});
  return units;
}

}  // namespace

Resharding::Resharding(boost::asio::io_context& io, TopologyHost& host) : io_(io), host_(host) {}

Resharding::~Resharding() {
  ++generation_;  // what the sampling still reports is dropped
  if (stop_sampling_) stop_sampling_();
  if (mover_) mover_->stop();
}

void Resharding::set_state_file(const std::filesystem::path& config_path,
                                const std::filesystem::path& state_file) {
  if (state_file.empty()) {
    state_file_ = config_path;
    state_file_ += ".reshard.json";
  } else if (state_file.is_relative()) {
    state_file_ = config_path.parent_path() / state_file;
  } else {
    state_file_ = state_file;
  }
}

Resharding::Planned Resharding::plan(config::TopologyPtr current, const config::TopologyPtr& next,
                                     std::string next_text) {
  if (running())
    return {false, protocol::error_message(protocol::ClientError::ReshardBusy,
                                           reshard_state_name(status_.state))};
  from_ = std::move(current);
  // The sub-keys of salted counters keep the names they have (a copy of `next` that says so).
  auto named = std::make_shared<config::Topology>(*next);
  named->salt_naming = from_->salt_naming ? from_->salt_naming : from_->map;
  to_ = std::move(named);
  from_text_ = in_force_text_;
  to_text_ = std::move(next_text);
  status_ = {};
  status_.state = ReshardState::Planned;
  status_.map_version = to_->version;
  status_.units = units_of(*from_, *to_);
  ++generation_;
  save();
  log_plan();
  sample();
  std::string message = fmt::format(
      "the new map moves keys: planned a move of {} unit{}; the old map keeps serving until "
      "SANTRAL RESHARD APPROVE (SANTRAL RESHARD PLAN shows it)",
      status_.units.size(), status_.units.size() == 1 ? "" : "s");
  if (to_->config->resharding.auto_approve) {
    approve();
    message = fmt::format(
        "the new map moves keys: moving {} unit{} to version {} "
        "(resharding.auto_approve)",
        status_.units.size(), status_.units.size() == 1 ? "" : "s", to_->version);
  }
  return {true, message};
}

void Resharding::cancel_plan(std::string_view why) {
  if (status_.state != ReshardState::Planned) return;
  spdlog::info("resharding: the planned move to version {} is dropped: {}", status_.map_version,
               why);
  status_ = {};
  ++generation_;
  save();
}

// Estimates in the background; the plan is there at once, its figures a moment later.
void Resharding::sample() {
  auto probe = moving_topology(*from_, *to_, to_->version, 0);
  auto generation = generation_;
  if (stop_sampling_) stop_sampling_();
  stop_sampling_ = sample_move(
      io_, probe, status_.units, kSamples, [this, generation](std::vector<UnitProgress> units) {
        if (generation != generation_) return;
        for (std::size_t i = 0; i < units.size() && i < status_.units.size(); ++i) {
          status_.units[i].keys_estimated = units[i].keys_estimated;
          status_.units[i].bytes_estimated = units[i].bytes_estimated;
        }
        spdlog::info("resharding: {}", describe_plan(status_));
      });
}

std::string Resharding::approve() {
  if (status_.state != ReshardState::Planned) {
    if (running())
      return protocol::error_message(protocol::ClientError::ReshardBusy,
                                     reshard_state_name(status_.state));
    return protocol::error_message(protocol::ClientError::ReshardNothingPlanned);
  }
  spdlog::info("resharding: approved; moving {} unit{} to version {}", status_.units.size(),
               status_.units.size() == 1 ? "" : "s", status_.map_version);
  start_moving(from_, to_, ReshardState::Moving);
  return {};
}

std::string Resharding::abort() {
  switch (status_.state) {
    case ReshardState::Planned:
      spdlog::info("resharding: the planned move to version {} was aborted; nothing moved",
                   status_.map_version);
      status_ = {};
      ++generation_;
      forget_move(state_file_);
      return {};
    case ReshardState::Moving:
      spdlog::info("resharding: aborted; moving the {} keys moved so far back", status_.keys_moved);
      start_moving(to_, from_, ReshardState::Aborting);
      return {};
    case ReshardState::Idle:
    case ReshardState::Finishing:
    case ReshardState::Aborting:
      break;
  }
  return protocol::error_message(protocol::ClientError::ReshardNotMoving,
                                 reshard_state_name(status_.state));
}

// Keys move from `from`'s placement to `to`'s: every worker switches first, then the walk.
void Resharding::start_moving(const config::TopologyPtr& from, const config::TopologyPtr& to,
                              ReshardState state) {
  if (mover_) {
    keys_before_ += mover_->progress().keys_moved;
    mover_->stop();
    mover_.reset();
  }
  status_.state = state;
  save();
  moving_ = moving_topology(*from, *to, host_.next_version(), ++epoch_);
  final_version_ = host_.next_version();
  status_.map_version = final_version_;
  started_ = std::chrono::steady_clock::now();
  auto epoch = epoch_;
  host_.switch_topology(moving_, [this, epoch] {
    if (epoch != epoch_) return;  // turned back meanwhile
    mover_ = std::make_unique<Mover>(io_, moving_, [this, epoch] {
      if (epoch == epoch_) walk_done();
    });
    mover_->start();
  });
}

config::TopologyPtr Resharding::restore(const ParseTopology& parse, std::uint64_t version) {
  std::optional<SavedMove> saved;
  try {
    saved = load_move(state_file_);
  } catch (const std::exception& e) {
    spdlog::error("resharding: ignoring {}: {}", state_file_.string(), e.what());
    return nullptr;
  }
  if (!saved) return nullptr;
  naming_text_ = saved->naming_text;
  std::shared_ptr<const config::ShardMap> naming;
  if (!naming_text_.empty())
    if (auto named = parse(naming_text_)) naming = named->map;
  if (saved->state == ReshardState::Idle) {
    naming_ = naming;
    return nullptr;
  }
  auto from = parse(saved->from_text);
  auto to = parse(saved->to_text);
  if (!from || !to) return nullptr;
  auto with_naming = [&naming](const config::TopologyPtr& topology) {
    auto named = std::make_shared<config::Topology>(*topology);
    named->salt_naming = naming;
    return config::TopologyPtr(named);
  };
  from_ = with_naming(from);
  to_ = with_naming(to);
  if (!naming) {
    auto named = std::make_shared<config::Topology>(*to_);
    named->salt_naming = from_->map;
    to_ = named;
  }
  from_text_ = saved->from_text;
  in_force_text_ = saved->from_text;
  to_text_ = saved->to_text;
  status_ = {};
  status_.map_version = to_->version;
  status_.units = units_of(*from_, *to_);
  if (saved->state == ReshardState::Planned) {
    status_.state = ReshardState::Planned;
    spdlog::info("resharding: {} holds a planned move; the old map serves until it is approved",
                 state_file_.string());
    return from_;
  }
  bool back = saved->state == ReshardState::Aborting;
  status_.state = back ? ReshardState::Aborting : ReshardState::Moving;
  moving_ = moving_topology(back ? *to_ : *from_, back ? *from_ : *to_, version, ++epoch_);
  final_version_ = version + 1;
  status_.map_version = final_version_;
  resume_walk_ = true;
  started_ = std::chrono::steady_clock::now();
  spdlog::info("resharding: resuming the move kept in {} ({})", state_file_.string(),
               reshard_state_name(status_.state));
  return moving_;
}

void Resharding::resume() {
  if (status_.state == ReshardState::Planned) sample();
  if (!resume_walk_) return;
  resume_walk_ = false;
  auto epoch = epoch_;
  mover_ = std::make_unique<Mover>(io_, moving_, [this, epoch] {
    if (epoch == epoch_) walk_done();
  });
  mover_->start();
}

// No source holds a key that moves: the destination map alone is put in force.
void Resharding::walk_done() {
  bool back = status_.state == ReshardState::Aborting;
  status_.state = ReshardState::Finishing;
  for (auto& unit : status_.units) unit.done = !back;
  auto final_topology = back ? from_ : to_;
  // A fresh version of it: the moving topology had the number after it.
  auto topology = std::make_shared<config::Topology>(*final_topology);
  topology->version = final_version_;
  topology->move = nullptr;
  topology->salt_naming = moving_->salt_naming;
  status_.map_version = topology->version;
  auto epoch = ++epoch_;
  host_.switch_topology(topology, [this, epoch, back] {
    if (epoch != epoch_) return;
    in_force_text_ = back ? from_text_ : to_text_;
    if (!back && naming_text_.empty()) naming_text_ = from_text_;
    finished();
    spdlog::info("resharding: {}; version {} is in force",
                 back ? "aborted, every key is back" : "done, every key is on its new owner",
                 status_.map_version);
  });
}

void Resharding::finished() {
  auto last = status();
  if (mover_) mover_->stop();
  status_ = {};
  status_.keys_moved = last.keys_moved;
  status_.bytes_moved = last.bytes_moved;
  status_.largest_key_bytes = last.largest_key_bytes;
  status_.map_version = last.map_version;
  status_.elapsed_s = last.elapsed_s;
  status_.errors = last.errors;
  status_.last_error = last.last_error;
  status_.keys_per_sec = last.keys_per_sec;
  mover_.reset();
  keys_before_ = 0;
  save();
}

ReshardStatus Resharding::status() const {
  ReshardStatus status = status_;
  if (!mover_ || status.state == ReshardState::Idle) return status;
  const auto& progress = mover_->progress();
  status.keys_moved = keys_before_ + progress.keys_moved;
  status.bytes_moved = progress.bytes_moved;
  status.errors = progress.errors;
  status.last_error = progress.last_error;
  status.largest_key_bytes = progress.largest_key_bytes;
  status.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (status.elapsed_s > 0) status.keys_per_sec = double(progress.keys_moved) / status.elapsed_s;
  auto estimated = status.keys_estimated();
  if (status.keys_per_sec > 0 && estimated > status.keys_moved)
    status.eta_s = double(estimated - status.keys_moved) / status.keys_per_sec;
  if (status.state == ReshardState::Moving)
    for (auto& unit : status.units) {
      // A unit is done once the walk of its source is.
      for (std::size_t s = 0; s < moving_->map->shard_count(); ++s)
        if (moving_->map->shard(s).name == unit.unit.from) unit.done = mover_->source_done(s);
    }
  return status;
}

void Resharding::save() {
  // Idle, the file is kept only for the names of salted counters' sub-keys.
  if (status_.state == ReshardState::Idle && naming_text_.empty()) return forget_move(state_file_);
  try {
    if (status_.state == ReshardState::Idle)
      save_move(state_file_, {status_.state, {}, {}, naming_text_});
    else
      save_move(state_file_, {status_.state, from_text_, to_text_, naming_text_});
  } catch (const std::exception& e) {
    spdlog::error(
        "resharding: cannot keep the move in {} ({}); it will not survive a restart "
        "(set resharding.state_file to a writable place)",
        state_file_.string(), e.what());
  }
}

void Resharding::log_plan() const {
  spdlog::info("resharding: planned; {}", describe_plan(status_));
}

}  // namespace santral::router
