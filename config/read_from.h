#pragma once

namespace santral::config {

// Where read-only commands go when a shard has replicas: `read_from` at the top of the config,
// and per namespace.
enum class ReadFrom {
  Primary,        // always the primary
  PreferReplica,  // a replica that is up, else the primary
  Replica,        // only replicas; an error when none is up
};

constexpr const char* read_from_name(ReadFrom read_from) {
  return read_from == ReadFrom::Primary         ? "primary"
         : read_from == ReadFrom::PreferReplica ? "prefer-replica"
                                                : "replica";
}

}  // namespace santral::config
