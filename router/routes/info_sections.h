#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace santral::router {

class WorkerServices;

// What an INFO request asks for, split into Santral's own sections and the shards'.
struct InfoRequest {
  bool santral = false;                       // "# Santral": the router itself
  bool shards = false;                        // "# Shards": one line per shard
  bool only_santral = false;                  // nothing to ask the shards
  std::vector<std::string> backend_sections;  // empty: the shards' default sections
};

InfoRequest parse_info_request(std::span<const std::string_view> args);

// The "# Santral" section: version, workers, clients, placement and each shard's state as this
// worker sees it.
std::string santral_info_section(WorkerServices& worker);

}  // namespace santral::router
