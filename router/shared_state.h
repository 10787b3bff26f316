#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace santral::router {

class ControlPlane;

// The little that all workers share; touched on connect and disconnect, never per request.
struct SharedState {
  std::atomic<std::size_t> connected_clients{0};
  std::atomic<std::uint64_t> next_client_id{1};
  std::atomic<std::uint64_t> rejected_clients{0};
  std::atomic<std::uint64_t> topology_version{1};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  ControlPlane* control = nullptr;
};

}  // namespace santral::router
