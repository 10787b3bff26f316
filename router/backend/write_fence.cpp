#include "router/backend/write_fence.h"

#include <fmt/format.h>

#include "router/backend/lease_clock.h"

namespace santral::router {

namespace {
std::atomic<const std::atomic<std::int64_t>*> fence{nullptr};
}

void set_write_fence(const std::atomic<std::int64_t>* serve_until_ns) {
  fence.store(serve_until_ns, std::memory_order_release);
}

std::int64_t write_fence_late_ms() {
  const auto* until = fence.load(std::memory_order_acquire);
  if (until == nullptr) return 0;
  auto late = lease_clock_ns() - until->load(std::memory_order_relaxed);
  return late > 0 ? late / 1'000'000 + 1 : 0;
}

std::string ConnectionFence::why(std::int64_t late) {
  return fmt::format("this router has not confirmed its fleet lease in time ({} ms late)", late);
}

bool ConnectionFence::lifted() {
  if (!waiting_ || write_fence_late_ms() > 0) return false;
  waiting_ = false;
  return true;
}

}  // namespace santral::router
