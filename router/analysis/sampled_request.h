#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace santral::router {

// One request an analysis sampled (SANTRAL ANALYZE), as the plan routed it.
struct SampledRequest {
  std::string key;           // its first key; empty for a keyless request
  std::string pattern;       // a keyless request's MATCH (SCAN) or KEYS pattern, if any
  std::string command;       // the command table's name: "get", "scan", "client|list"
  bool write = false;        // the command may write
  std::uint16_t shards = 0;  // the shards the plan sends it to (0: Santral answered it)
  std::uint16_t of = 0;      // the shards keys were placed on then
  std::int64_t at_us = 0;    // when, on the coarse system clock (microseconds since the epoch)
};

// One key a shard's RANDOMKEY drew, standing for `weight` of that shard's keys.
struct StoredKey {
  std::string key;
  double weight = 1;
  std::uint64_t bytes = 0;  // MEMORY USAGE
};

// What an analysis had to look at: the sampled requests of every router and worker, and the
// keys drawn from each shard.
struct AnalysisSamples {
  std::vector<SampledRequest> requests;
  std::vector<StoredKey> stored;
  double seconds = 0;                // how long requests were sampled
  double rate = 0;                   // the share of requests sampled
  std::vector<std::string> routers;  // the routers whose requests are in (this one first)
  std::vector<std::string> missing;  // routers of the fleet that did not answer, and why
};

}  // namespace santral::router
