#include "router/backend/shard_health.h"

#include <algorithm>
#include <utility>

namespace santral::router {

void ShardHealth::configure(const config::Config& config) {
  threshold_ = config.health.failures;
  interval_ = config.health.interval;
  reconnect_min_ = config.timeouts.reconnect_min;
  reconnect_max_ = config.timeouts.reconnect_max;
}

bool ShardHealth::failed(bool counts) {
  if (counts) ++failures_;
  return ejected_ || failures_ >= threshold_;
}

bool ShardHealth::eject(std::string reason) {
  bool first = !ejected_;
  ejected_ = true;
  down_reason_ = std::move(reason);
  return first;
}

std::chrono::milliseconds ShardHealth::next_backoff() {
  backoff_ = backoff_.count() == 0 ? reconnect_min_ : std::min(backoff_ * 2, reconnect_max_);
  return backoff_;
}

bool ShardHealth::probe_answered() {
  if (!ejected_) return false;
  ejected_ = false;
  backoff_ = std::chrono::milliseconds(0);
  down_reason_.clear();
  return true;
}

bool ShardHealth::probe_due(Clock::time_point now) {
  if (ejected_ || now - last_reply_ <= interval_) return false;
  last_reply_ = now;
  return true;
}

}  // namespace santral::router
