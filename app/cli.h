#pragma once

#include <optional>
#include <string>

#include "config/config.h"

namespace santral::router {

struct CommandLine {
  std::string config_path;
  bool check_only = false;
  config::ConfigFormat format = config::ConfigFormat::Auto;
  std::string pool;
  std::optional<std::string> log_level;
  std::optional<unsigned> workers;
  std::optional<std::string> listen;        // host:port, overrides `listen`
  std::optional<std::string> admin_listen;  // host:port, overrides `admin.listen`
  std::optional<std::string> announce;      // host:port, overrides `announce`
};

// Parses argv. On --help, --version or a usage error it prints what is needed and returns the
// exit code to leave with; otherwise fills `out` and returns nullopt.
std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out);

}  // namespace santral::router
