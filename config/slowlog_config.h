#pragma once

#include <cstdint>

namespace santral::config {

// `slowlog:` which requests SLOWLOG keeps (router/runtime/slow_log.h): those whose reply took
// at least `threshold_us` from the moment Santral read them to the moment it was ready for the
// client, as Redis's slowlog-log-slower-than (a negative threshold keeps none, 0 keeps all),
// and the newest `max_len` of them (slowlog-max-len).
struct SlowLogSettings {
  std::int64_t threshold_us = 10000;
  std::uint32_t max_len = 128;

  bool enabled() const { return threshold_us >= 0 && max_len > 0; }
};

}  // namespace santral::config
