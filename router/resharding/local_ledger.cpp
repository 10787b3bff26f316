#include "router/resharding/local_ledger.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "protocol/errors.h"
#include "router/resharding/state_files.h"

namespace santral::router {

namespace {

using nlohmann::json;
using Phase = MoveDocument::Phase;
constexpr int kFormat = 2;

std::string failure(const std::filesystem::path& path, std::string_view what) {
  return protocol::error_message(protocol::ClientError::ReshardStateFile, path.string(), what);
}

std::optional<Phase> phase_named(std::string_view name) {
  for (auto phase : {Phase::Planned, Phase::Moving, Phase::Aborting})
    if (phase_name(phase) == name) return phase;
  return std::nullopt;
}

json move_json(const LedgerMove& move) {
  const auto& d = move.document;
  return {{"id", move.id},    {"state", phase_name(d.phase)},
          {"epoch", d.epoch}, {"from", d.from_text},
          {"to", d.to_text},  {"proposed_by", d.proposed_by}};
}

// Format 1 (before 2026-12) kept only a move under way ({"state", "from", "to", "naming"}).
LedgerMove read_move(const json& j, const std::filesystem::path& path) {
  LedgerMove move;
  auto state = phase_named(j.at("state").get<std::string>());
  // "finishing" (format 1): the walk was done; walking again finds nothing and ends it.
  if (!state && j.at("state").get<std::string>() == "finishing") state = Phase::Moving;
  if (!state)
    throw StateFileError(
        fmt::format("{}: field state: expected planned, moving or aborting", path.string()));
  move.document.phase = *state;
  move.document.epoch = j.value("epoch", std::uint64_t{0});
  move.document.from_text = j.at("from").get<std::string>();
  move.document.to_text = j.at("to").get<std::string>();
  move.document.proposed_by = j.value("proposed_by", "santral");
  move.id = j.value("id", std::int64_t{0});
  return move;
}

}  // namespace

LocalLedger::LocalLedger(const std::filesystem::path& config_path,
                         const std::filesystem::path& state_file)
    : path_(state_file_path(config_path, state_file, ".reshard.json")) {}

LocalLedger::Kept LocalLedger::load() {
  Kept kept;
  std::string error;
  auto text = read_state_file(path_, error);
  if (!error.empty())
    throw StateFileError(fmt::format(
        "{}: the resharding state file cannot be read ({}); it names the map in force, so "
        "Santral does not start without it: make it readable, or move it away only if no move "
        "ever ran with this config",
        path_.string(), error));
  if (!text) return kept;
  auto j = json::parse(*text, nullptr, false);
  auto bad = [this](std::string_view why) {
    return StateFileError(fmt::format(
        "{}: not a resharding state file ({}); it names the map in force, so Santral does not "
        "start without it: restore it from a backup, or move it away only if no move ever ran "
        "with this config",
        path_.string(), why));
  };
  if (j.is_discarded() || !j.is_object()) throw bad("not a JSON object");
  try {
    kept.found = true;
    if (j.value("format", 1) >= kFormat) {
      in_force_ = j.at("in_force").get<std::string>();
      naming_ = j.value("naming", "");
      epochs_ = j.value("epochs", std::uint64_t{0});
      moves_ = j.value("moves", std::int64_t{0});
      if (j.contains("move") && !j["move"].is_null()) move_ = read_move(j["move"], path_);
    } else {
      naming_ = j.value("naming", "");
      if (j.at("state").get<std::string>() != "idle") {
        move_ = read_move(j, path_);
        in_force_ = move_->document.from_text;
      }
    }
  } catch (const json::exception& e) {
    throw bad(e.what());
  }
  if (move_) {
    if (move_->id == 0) move_->id = ++moves_;
    // Resumed: a new epoch, released at once (no router but this one routes the old way).
    if (move_->document.phase != Phase::Planned) {
      move_->document.epoch = ++epochs_;
      move_->document.released = 0;
    }
    move_->revision = ++revision_;
  }
  kept.in_force_text = in_force_;
  kept.move = move_;
  return kept;
}

std::string LocalLedger::save(const std::string& in_force, const std::string& naming,
                              const std::optional<LedgerMove>& move, std::uint64_t epochs,
                              std::int64_t moves) const {
  json j = {{"format", kFormat}, {"in_force", in_force}, {"naming", naming},
            {"epochs", epochs},  {"moves", moves},       {"move", nullptr}};
  if (move) j["move"] = move_json(*move);
  if (auto error = write_durably(path_, j.dump(2) + '\n'); !error.empty())
    return failure(path_, error);
  return {};
}

void LocalLedger::changed() {
  if (changed_) changed_(move_);
}

void LocalLedger::set_in_force_text(std::string text) {
  if (text == in_force_) return;
  std::error_code ec;
  bool kept = std::filesystem::exists(path_, ec);
  if (kept && !move_) {
    if (auto error = save(text, naming_, move_, epochs_, moves_); !error.empty())
      spdlog::warn("resharding: {} (the map in force did not change)", error);
  }
  in_force_ = std::move(text);
}

void LocalLedger::propose(MoveDocument document, Done done) {
  if (move_ && move_->document.phase != Phase::Planned)
    return done(protocol::error_message(protocol::ClientError::ReshardBusy,
                                        phase_name(move_->document.phase)));
  LedgerMove move{std::move(document), moves_ + 1, revision_ + 1};
  auto epochs = epochs_;
  move.document.released = 0;
  move.document.epoch = move.document.phase == Phase::Planned ? 0 : ++epochs;
  if (auto error = save(in_force_, naming_, move, epochs, move.id); !error.empty())
    return done(error);
  epochs_ = epochs;
  moves_ = move.id;
  ++revision_;
  move_ = std::move(move);
  changed();
  done({});
}

void LocalLedger::approve(Done done) {
  if (!move_) return done(protocol::error_message(protocol::ClientError::ReshardNothingPlanned));
  if (move_->document.phase != Phase::Planned)
    return done(protocol::error_message(protocol::ClientError::ReshardBusy,
                                        phase_name(move_->document.phase)));
  LedgerMove move = *move_;
  move.document.phase = Phase::Moving;
  move.document.epoch = epochs_ + 1;
  move.revision = revision_ + 1;
  if (auto error = save(in_force_, naming_, move, epochs_ + 1, moves_); !error.empty())
    return done(error);
  ++epochs_;
  ++revision_;
  move_ = std::move(move);
  spdlog::info("resharding: approved; epoch {}", move_->document.epoch);
  changed();
  done({});
}

void LocalLedger::abort(Done done) {
  if (!move_) return done(protocol::error_message(protocol::ClientError::ReshardNotMoving, "idle"));
  switch (move_->document.phase) {
    case Phase::Planned: {
      if (auto error = save(in_force_, naming_, std::nullopt, epochs_, moves_); !error.empty())
        return done(error);
      spdlog::info("resharding: the planned move was aborted; nothing moved");
      move_.reset();
      changed();
      return done({});
    }
    case Phase::Moving: {
      LedgerMove move = *move_;
      move.document.phase = Phase::Aborting;
      move.document.epoch = epochs_ + 1;
      move.document.released = 0;
      move.revision = revision_ + 1;
      if (auto error = save(in_force_, naming_, move, epochs_ + 1, moves_); !error.empty())
        return done(error);
      ++epochs_;
      ++revision_;
      move_ = std::move(move);
      spdlog::info("resharding: aborted; moving the keys moved so far back (epoch {})",
                   move_->document.epoch);
      changed();
      return done({});
    }
    case Phase::Aborting:
      break;
  }
  done(protocol::error_message(protocol::ClientError::ReshardNotMoving,
                               phase_name(move_->document.phase)));
}

void LocalLedger::acknowledge(std::int64_t id, std::uint64_t epoch) {
  acknowledged_id_ = id;
  acknowledged_epoch_ = epoch;
}

bool LocalLedger::all_acknowledged(std::int64_t id, std::uint64_t epoch) const {
  return acknowledged_id_ == id && acknowledged_epoch_ >= epoch;
}

// The release needs no record: after a restart the move gets a new epoch anyway.
void LocalLedger::release(const LedgerMove& move, Done done) {
  if (!move_ || move_->id != move.id || move_->document.epoch != move.document.epoch)
    return done("the move changed meanwhile");
  move_->document.released = move.document.released;
  move_->revision = ++revision_;
  changed();
  done({});
}

void LocalLedger::finish(const LedgerMove& move, Done done) {
  if (!move_ || move_->id != move.id || move_->document.epoch != move.document.epoch)
    return done("the move changed meanwhile");
  bool back = move_->document.phase == Phase::Aborting;
  std::string in_force = back ? move_->document.from_text : move_->document.to_text;
  // Salted counters' sub-keys keep the names the first map gave them.
  std::string naming = naming_.empty() && !back ? move_->document.from_text : naming_;
  if (auto error = save(in_force, naming, std::nullopt, epochs_, moves_); !error.empty())
    return done(error);
  in_force_ = std::move(in_force);
  naming_ = std::move(naming);
  move_.reset();
  walked_ = 0;
  changed();
  done({});
}

}  // namespace santral::router
