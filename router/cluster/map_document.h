#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace santral::router {

// The shard map as etcd keeps it, under /santral/<name>/map: a JSON document with a format
// version and the shared part of a config (config/shared_map.h) as YAML text.
//   {"format": 1, "santral": "0.4.0", "pushed_by": "router-a", "config": "shards: ...",
//    "moved_from": 7, "based_on": 7, "salt_naming": "shards: ..."}
// The key's mod_revision is the map's version.
inline constexpr int kMapFormat = 1;

struct MapDocument {
  std::string config_text;      // the shared part of a config file
  std::string pushed_by;        // the router that proposed it
  std::int64_t moved_from = 0;  // written as a move ended: the version the keys moved from
  // Its lineage: the version it replaced (the compare-and-swap it was written with). A router
  // serving an older version missed what came between, and takes the map as it is.
  std::int64_t based_on = 0;
  // The shared part of the map salted counters' sub-keys are named by, when not this one: the
  // map in force before the first move. Every router names them alike, one started after the
  // move too (placement/topology.h, salt_naming).
  std::string salt_naming{};
};

std::string encode_map(const MapDocument& map);

// The map `value` read from etcd `key`, validated: the shared config it holds, or an error
// naming the key and the field (the same on every router).
struct DecodedMap {
  std::optional<config::Config> shared;
  std::string config_text;
  std::string pushed_by;
  std::int64_t moved_from = 0;
  std::int64_t based_on = 0;
  std::string salt_naming;  // empty: the map names them
  std::string error;
};
DecodedMap decode_map(std::string_view key, const std::string& value);

}  // namespace santral::router
