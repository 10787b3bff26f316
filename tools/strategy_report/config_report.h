#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace santral::strategy_report {

struct ConfigReportOptions {
  std::filesystem::path config;
  std::filesystem::path trace;
  std::vector<std::string> scans;  // SCAN MATCH globs to cost
  bool markdown = false;
};

// An operator's config and trace: per namespace (and the default placement) the hot-spot ratio,
// store touches, and the share of keys that move when a shard is added; per --scan glob the
// shards Santral would send SCAN MATCH to and the keys they hold. Throws config::ConfigError or
// std::runtime_error for a bad config or trace.
void print_config_report(const ConfigReportOptions& options, std::ostream& out);

}  // namespace santral::strategy_report
