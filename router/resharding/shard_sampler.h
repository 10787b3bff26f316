#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "placement/topology.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

// One key RANDOMKEY drew, and what MEMORY USAGE said it takes.
struct SampledKey {
  std::string key;
  std::uint64_t bytes = 0;
};

// What one shard's primary holds, from a sample: DBSIZE, and `samples` RANDOMKEY draws (with
// repetition: each draw stands for keys / draws of its keys) with their sizes.
struct ShardSample {
  std::size_t shard = 0;
  bool answered = false;
  std::string error;       // the shard's error, or Santral's when it did not answer
  std::uint64_t keys = 0;  // DBSIZE
  std::vector<SampledKey> draws;
};

// Samples `shards` (indices into the topology's map) on their own connections, each in two
// round trips (DBSIZE and the RANDOMKEYs, then the MEMORY USAGEs), and gives up on a shard
// that has not answered within a few seconds. `done` runs on `io`'s thread with one sample per
// shard, in the order given. Returns what ends the sampling at once (its connections closed;
// `done` then gets what is in so far). For a move's estimates and for the balancer.
std::function<void()> sample_shards(boost::asio::io_context& io,
                                    const placement::TopologyPtr& topology,
                                    const std::vector<std::size_t>& shards, unsigned samples,
                                    std::function<void(std::vector<ShardSample>)> done);

}  // namespace santral::router
