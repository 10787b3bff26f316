#pragma once

#include <optional>
#include <string>
#include <vector>

namespace santral::router {

// One client's CLIENT TRACKING settings, as Redis keeps them (CLIENT TRACKINGINFO shows them).
struct TrackingSettings {
  enum class Mode { Default, OptIn, OptOut, Broadcast };

  bool on = false;
  Mode mode = Mode::Default;
  bool noloop = false;
  // REDIRECT <id>: invalidations go to that client (0: to this one), served by that worker.
  // Broken once the client was found gone, as Redis reports it (CLIENT TRACKINGINFO).
  std::uint64_t redirect = 0;
  unsigned redirect_worker = 0;
  bool redirect_broken = false;
  std::vector<std::string> prefixes;  // BCAST PREFIX ...; none: every key
  // CLIENT CACHING yes|no: applies to the next command (or to the whole MULTI it opens).
  std::optional<bool> caching;

  // Whether a read the client makes now is remembered for invalidation.
  bool tracks_reads() const {
    if (!on || mode == Mode::Broadcast) return false;
    if (mode == Mode::OptIn) return caching.value_or(false);
    if (mode == Mode::OptOut) return caching.value_or(true);
    return true;
  }
  bool matches_prefix(std::string_view key) const {
    if (prefixes.empty()) return true;
    for (const auto& prefix : prefixes)
      if (key.starts_with(prefix)) return true;
    return false;
  }
};

}  // namespace santral::router
