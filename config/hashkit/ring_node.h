#pragma once

#include <cstdint>
#include <string_view>

namespace santral::hashkit {

// What a distribution needs to know about one shard: the name twemproxy hashes to place its
// points (the server's name, or "host:port" when it has none) and its weight.
struct RingNode {
  std::string_view name;
  std::uint32_t weight = 1;
};

}  // namespace santral::hashkit
