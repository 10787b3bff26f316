#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace santral::tools {

// The size of the cluster the benchmark builds.
struct BigMapSize {
  std::size_t shards = 1000;
  std::size_t slot_ranges = 1000;  // the 16,384 slots cut into this many ranges, one per shard
  std::size_t ranges = 10000;
  std::size_t groups = 100000;
};

// A Santral config (YAML) with `size.shards` shards placed by ketama (murmur), and three
// namespaces: `slot:{id}` over Redis Cluster slots, `range:{n}` over numeric ranges and
// `order:{seller}:{id}` over a directory of sellers. Shard addresses are loopback ports
// nothing needs to listen on.
std::string big_map_yaml(const BigMapSize& size, int first_port = 20000);

// `count` keys of each namespace (and plain keys for ketama), spread over all of it.
struct BenchKeys {
  std::vector<std::string> ketama, slots, ranges, directory;
};
BenchKeys bench_keys(const BigMapSize& size, std::size_t count);

}  // namespace santral::tools
