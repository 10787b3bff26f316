#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace santral::router {

// How to read the config again on a reload, and what the command line overrides in it.
struct ConfigSource {
  std::filesystem::path path;
  config::ConfigFormat format = config::ConfigFormat::Auto;
  std::string pool;
  std::optional<unsigned> workers;
  std::optional<std::string> log_level;
  std::optional<std::string> listen;
  std::optional<std::string> admin_listen;
  std::optional<std::string> announce;

  config::Config load() const;  // throws config::ConfigError
  // The same from the file's text, read once, so that the text kept with a move is the text
  // that was loaded.
  std::string read_text() const;
  config::Config parse(const std::string& text) const;  // throws config::ConfigError
};

// What a reload may not change without a restart (listeners, workers, admin.listen, cluster,
// audit),
// put back in `next` to the running values; each one kept is named for the reload's answer.
std::vector<std::string> keep_restart_settings(const config::Config& current, config::Config& next);

}  // namespace santral::router
