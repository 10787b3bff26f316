#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "router/process/config_source.h"
#include "router/process/fleet_sync.h"
#include "router/resharding/local_ledger.h"
#include "router/resharding/move_driver.h"
#include "router/runtime/control_plane.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

// Reloads of the config file (SIGHUP, a changed file, SANTRAL RELOAD), on the server's thread.
// Alone, a reload whose map moves keys is planned as a move (MoveDriver); one that moves
// nothing is put in force at once. In a fleet, the file's own settings apply here and its map,
// when new, is proposed to etcd as the fleet's next version. A reload that fails names the
// file, line and key, and the config in force keeps serving.
class ConfigReloads {
 public:
  using ReloadResult = ControlPlane::ReloadResult;
  using ReloadRecord = ControlPlane::ReloadRecord;

  // `fleet`: the fleet's link, or nullptr alone (then `local` is the state file's ledger).
  // `audit`: where every reload is written as `who`'s (nullptr: no audit log).
  // `reloaded`: told each config a reload put in force (what is read only from it).
  ConfigReloads(const ConfigSource& source, RouterHost& host, MoveDriver& driver,
                LocalLedger* local, FleetSync* fleet, AuditLog* audit,
                std::function<void(const config::Config&)> reloaded);

  // `why` names the trigger in the log, in last() and in the audit log, where `who` asked for
  // it; `done` may be empty.
  void reload(const std::string& why, AuditActor who, std::function<void(ReloadResult)> done);
  // Once a second: reloads when the file's modification time or size changed (watch_file),
  // unless some reload read this text already (SANTRAL RELOAD right after the edit).
  void check_file();
  ReloadResult remember(std::string_view why, ReloadResult result);
  const std::optional<ReloadRecord>& last() const { return last_; }
  // What the last reload (or the start) read from the file.
  const std::string& last_read_text() const { return last_read_text_; }

 private:
  // The file read, parsed and its certificates loaded; `error` says why not.
  struct Reading {
    config::Config next;
    std::string text;
    std::string file_map;  // in a fleet: the file's map, as the fleet shares it
    TlsContextsPtr tls;
    std::string error;
  };
  Reading read(const std::string& why);
  void alone(const std::string& why, const std::function<void(ReloadResult)>& done);
  void in_fleet(const std::string& why, const std::function<void(ReloadResult)>& done);
  bool already_read() const;

  const ConfigSource& source_;
  RouterHost& host_;
  MoveDriver& driver_;
  LocalLedger* local_;
  FleetSync* fleet_;
  AuditLog* audit_;
  std::function<void(const config::Config&)> reloaded_;
  std::string last_read_text_;
  std::optional<ReloadRecord> last_;
  std::optional<std::filesystem::file_time_type> file_time_;
  std::uintmax_t file_size_ = 0;
};

}  // namespace santral::router
