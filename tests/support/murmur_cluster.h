// A config of `shards` shards named s0, s1, ... on 127.0.0.1:7000 and up, hashed with murmur and
// no hash tag: the cluster the analysis tests place their samples on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"
#include "config/hashkit/hash_functions.h"

namespace santral::test {

inline config::Config murmur_cluster(std::size_t shards) {
  config::Config c;
  c.hash_name = "murmur";
  c.hash = hashkit::murmur;
  c.hash_tag = "";
  for (std::size_t i = 0; i < shards; ++i) {
    config::ShardConfig s;
    s.name = "s" + std::to_string(i);
    s.ring_name = s.name;
    s.address = {"127.0.0.1", static_cast<std::uint16_t>(7000 + i)};
    c.shards.push_back(s);
  }
  return c;
}

}  // namespace santral::test
