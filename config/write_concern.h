#pragma once

#include <chrono>
#include <cstdint>

namespace santral::config {

// `write_concern`: a write is acknowledged only once this many replicas have it (WAIT); at the
// top of the config, and per namespace.
struct WriteConcern {
  std::uint32_t replicas = 0;  // 0: off
  std::chrono::milliseconds timeout{100};
  bool operator==(const WriteConcern&) const = default;
};

}  // namespace santral::config
