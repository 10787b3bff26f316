#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "config/config.h"
#include "router/cluster/fleet_agent.h"

namespace santral::router {

struct ConfigSource;

// How a router of a fleet (`cluster:`) starts: with the fleet's map from etcd, or with its
// file's when etcd has none yet (it publishes it).
struct FleetStart {
  std::unique_ptr<FleetAgent> agent;  // nullptr: not in a fleet
  config::Config config;              // the file's settings with the fleet's map
  std::uint64_t map_version = 1;      // the etcd revision of the map it starts with
  std::string map_text;               // the shared part in force (config/shared_map.h)
  std::string file_map_text;          // the shared part of the file, as read at start
  std::string salt_naming_text;       // the map salted counters are named by (empty: map_text)
  std::optional<EtcdKeyValue> salting;
  std::optional<EtcdKeyValue> move;  // a move in progress
};

// Joins the fleet `config.cluster` names. Throws FleetJoinFailed with what to tell the
// operator (etcd unreachable; neither etcd nor the file holds a valid map).
class FleetJoinFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
FleetStart join_fleet(const ConfigSource& source, config::Config config);

}  // namespace santral::router
