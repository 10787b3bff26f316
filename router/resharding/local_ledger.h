#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "router/resharding/move_ledger.h"

namespace santral::router {

// A state file that cannot be read, or a move that cannot be written to it: the router does
// not start, or the change does not happen (fail closed). `what()` names the file.
class StateFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A single router's move ledger: the state file (resharding.state_file, by default beside
// the config file). Once a move was ever planned it names, always, the config whose map is in
// force, and the move under way if any; every change is written (file and directory fsynced)
// before it takes effect, and a write that fails is refused with the file's name:
//
//   {"format": 2, "in_force": "<config text>", "naming": "<config text>", "epochs": 7,
//    "moves": 3, "move": {"id": 3, "state": "moving", "epoch": 7, "from": "...", "to": "..."}}
//
// At start a config file whose map differs from the one in force becomes a planned move
// (router/process/server.cpp), never a silent switch.
class LocalLedger final : public MoveLedger {
 public:
  // The file for `config_path` and the setting `state_file` (relative: to the config's folder).
  LocalLedger(const std::filesystem::path& config_path, const std::filesystem::path& state_file);

  // What the file holds at start. Throws StateFileError when it exists but cannot be read or
  // is not a state file. A move under way gets the next epoch (its walk starts again).
  struct Kept {
    bool found = false;
    std::string in_force_text;  // empty: none kept (the config file's map is in force)
    std::optional<LedgerMove> move;
  };
  Kept load();
  const std::filesystem::path& path() const { return path_; }

  // Where changes go (the move driver).
  void on_change(std::function<void(const std::optional<LedgerMove>&)> changed) {
    changed_ = std::move(changed);
  }
  // A reload that moved nothing: its config is the one in force. Kept only once the file
  // exists; a failure to keep it is logged (the map in force did not change).
  void set_in_force_text(std::string text);
  // The config salted counters' sub-keys are named by, once a move has ended (empty: the one
  // in force).
  const std::string& naming_text() const { return naming_; }
  bool has_move() const { return move_.has_value(); }

  void propose(MoveDocument document, Done done) override;
  void approve(Done done) override;
  void abort(Done done) override;
  void acknowledge(std::int64_t id, std::uint64_t epoch) override;
  bool all_acknowledged(std::int64_t id, std::uint64_t epoch) const override;
  void release(const LedgerMove& move, Done done) override;
  void finish(const LedgerMove& move, Done done) override;
  void report_walk(std::uint64_t keys_moved) override { walked_ = keys_moved; }
  std::uint64_t walk_reported(std::int64_t) const override { return walked_; }
  std::string in_force_text() const override { return in_force_; }

 private:
  // Writes the state as it would be after a change; "" or why it could not.
  std::string save(const std::string& in_force, const std::string& naming,
                   const std::optional<LedgerMove>& move, std::uint64_t epochs,
                   std::int64_t moves) const;
  void changed();

  std::filesystem::path path_;
  std::string in_force_;
  std::string naming_;
  std::optional<LedgerMove> move_;
  std::uint64_t epochs_ = 0;   // the last epoch given out
  std::int64_t moves_ = 0;     // the last move id given out
  std::int64_t revision_ = 0;  // of the record, one per change
  std::int64_t acknowledged_id_ = 0;
  std::uint64_t acknowledged_epoch_ = 0;
  std::uint64_t walked_ = 0;
  std::function<void(const std::optional<LedgerMove>&)> changed_;
};

}  // namespace santral::router
