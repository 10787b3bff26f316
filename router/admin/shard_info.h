#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace santral::router {

class ControlPlane;

// What a shard's primary says of itself in INFO: how many keys it holds and how much memory.
struct ShardInfo {
  std::string name;
  std::string address;
  bool answered = false;
  std::string error;  // the shard's error, or Santral's (down, timed out) when it did not answer
  std::uint64_t keys = 0;     // over every database (INFO keyspace)
  std::uint64_t expires = 0;  // keys with a time to live
  std::uint64_t used_memory = 0;
  std::uint64_t maxmemory = 0;  // 0: no limit
};

// Sends INFO memory and INFO keyspace to every shard's primary down the first worker's shared
// connections (so a shard that is down answers at once, a hung one within timeouts.request_ms)
// and hands the answers, in map order, to `done` on the server's thread. For /shards/info.
void take_shard_info(ControlPlane& server, std::function<void(std::vector<ShardInfo>)> done);

// Reads INFO text into `info` (the fields it has; the others are left alone).
void read_info_text(std::string_view text, ShardInfo& info);

}  // namespace santral::router
