#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "router/tracking/tracking_settings.h"

namespace santral::router {

// What the lanes need of a client they fan invalidations out to.
class TrackingClient {
 public:
  virtual ~TrackingClient() = default;
  virtual const TrackingSettings& tracking_settings() const = 0;
  // An `invalidate` push, written after every reply the client is owed so far.
  virtual void invalidate(std::string_view push) = 0;
};

// The worker's client with that id, or nullptr when it is gone.
using FindTrackingClient = std::function<TrackingClient*(std::uint64_t id)>;

// RESP3 `invalidate` pushes as Redis sends them: one key, several (a BCAST prefix's keys
// written in one event loop), or null (flush everything).
std::string invalidation_push(std::string_view key);
std::string invalidation_push(std::span<const std::string_view> keys);
std::string_view null_invalidation_push();

}  // namespace santral::router
