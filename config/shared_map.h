#pragma once

#include <filesystem>
#include <string>

#include "config/config.h"

namespace santral::config {

// In a fleet (`cluster:`) the shard map is shared through etcd and the rest stays each
// router's own. Shared: hash, distribution, hash_tag, shards, namespaces, salting, near_cache,
// hotkeys, resharding, users, password, databases, read_from, cross_shard_writes, commands,
// write_concern and sentinel (the sentinels to ask: a shard that names a sentinel_master is
// followed by every router itself, so a failover is not a map change). Each router's: listen,
// workers, tls, admin, timeouts, backend, limits, health, watch_file, drain_ms, failover,
// log_level and cluster.

// The shared part of a Santral config file's text, as a YAML document of its own (what is
// published in etcd). Throws ConfigError naming `source` when the text is not YAML.
std::string shared_map_text(const std::string& file_text, const std::filesystem::path& source);

// `local` with the shared part taken from `shared` (a map read from etcd).
void adopt_shared_map(Config& local, const Config& shared);

// Whether the config places keys at all (a fleet member's file may leave its shards to etcd).
inline bool has_shard_map(const Config& config) {
  return !config.shards.empty();
}

}  // namespace santral::config
