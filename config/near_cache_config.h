#pragma once

#include <cstdint>

namespace santral::config {

// The near cache of hot reads (`near_cache:`): each worker keeps the replies to GET of the
// keys its hot-key detector sees read often, kept coherent by Redis's client-side caching
// (router/hotkeys/near_cache/near_cache.h).
struct NearCacheSettings {
  bool enabled = false;  // for keys of no namespace, and of namespaces that do not say
  std::uint64_t max_bytes = 64ull * 1024 * 1024;  // per worker: keys, values and bookkeeping
  std::uint32_t min_reads_per_sec = 100;          // a key is admitted above this, per worker
};

}  // namespace santral::config
