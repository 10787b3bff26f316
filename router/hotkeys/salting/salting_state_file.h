#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "router/hotkeys/salting/salt_table.h"

namespace santral::router {

// hotkeys.state_file, for a router alone (a fleet keeps its salting in etcd): the counters
// salted at run time (SANTRAL SALT, automatic salting) whose sub-keys may hold counts. A key
// is written in before its salting takes effect and leaves only once its fold back into the
// key is done, so a restart, even after SIGKILL or a drain cut short, reads each such counter
// whole: it starts with them salted again. Same JSON as the fleet's etcd document.
// Not thread-safe: its users hold SharedState::salt_lock.
class SaltingStateFile {
 public:
  // The file: `state_file`; relative, to the config file's folder; empty,
  // `<config>.salting.json` beside the config file.
  SaltingStateFile(const std::filesystem::path& config_path,
                   const std::filesystem::path& state_file);

  // What the last run left salted (no file: nothing). Throws StartError when it cannot be
  // read: starting without it would read those counters without their sub-keys.
  struct StartError : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  const SaltOverrides& load();

  // `key` is about to be salted: written in first. "" or why the file was not written (the key
  // must not be salted then).
  std::string keep(const std::string& key, const SaltOverrides::Salting& salting);
  // `key`'s sub-keys were folded back: out of the file (a failed write is logged; the next
  // start then salts the key again, which loses nothing).
  void forget(const std::string& key);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::string save();

  std::filesystem::path path_;
  SaltOverrides kept_;
};

}  // namespace santral::router
