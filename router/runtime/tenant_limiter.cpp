#include "router/runtime/tenant_limiter.h"

#include <algorithm>

namespace santral::router {

void TenantLimiter::configure(const config::TenantLimits& limits) {
  requests_per_s_.store(limits.requests_per_s, std::memory_order_relaxed);
  // A burst left at 0 is a second's worth, as when the config does not give one.
  burst_.store(limits.burst > 0 ? limits.burst : limits.requests_per_s, std::memory_order_relaxed);
  max_connections_.store(limits.max_connections, std::memory_order_relaxed);
  max_pipeline_.store(limits.max_pipeline, std::memory_order_relaxed);
  wait_ns_.store(std::int64_t{limits.wait_ms} * 1'000'000, std::memory_order_relaxed);
  interval_ns_.store(limits.requests_per_s == 0 ? 0 : 1'000'000'000 / limits.requests_per_s,
                     std::memory_order_relaxed);
}

config::TenantLimits TenantLimiter::limits() const {
  return {requests_per_s_.load(std::memory_order_relaxed), burst_.load(std::memory_order_relaxed),
          max_connections_.load(std::memory_order_relaxed),
          max_pipeline_.load(std::memory_order_relaxed),
          static_cast<std::uint32_t>(wait_ns_.load(std::memory_order_relaxed) / 1'000'000)};
}

std::optional<std::chrono::nanoseconds> TenantLimiter::take_slow_path(
    std::chrono::steady_clock::time_point now, std::int64_t interval, std::int64_t most_wait) {
  auto now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  auto allowance = interval * static_cast<std::int64_t>(burst_.load(std::memory_order_relaxed));
  auto tat = tat_ns_.load(std::memory_order_relaxed);
  for (;;) {
    auto next = std::max(tat, now_ns) + interval;
    auto wait = next - now_ns - allowance;
    if (wait > most_wait) {
      refused_requests_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    if (tat_ns_.compare_exchange_weak(tat, next, std::memory_order_relaxed)) {
      if (wait <= 0) return std::chrono::nanoseconds(0);
      held_requests_.fetch_add(1, std::memory_order_relaxed);
      return std::chrono::nanoseconds(wait);
    }
  }
}

bool TenantLimiter::add_connection() {
  auto most = max_connections_.load(std::memory_order_relaxed);
  auto now = connections_.fetch_add(1, std::memory_order_relaxed);
  if (most == 0 || now < static_cast<std::int64_t>(most)) return true;
  connections_.fetch_sub(1, std::memory_order_relaxed);
  refused_connections_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

TenantLimiter::Counters TenantLimiter::counters() const {
  return {static_cast<std::uint64_t>(std::max<std::int64_t>(0, connections_.load())),
          refused_requests_.load(), refused_connections_.load(), refused_pipeline_.load(),
          held_requests_.load()};
}

std::chrono::milliseconds pause_after_refusal(std::uint32_t wait_ms, unsigned refusals_before) {
  if (wait_ms == 0) return std::chrono::milliseconds(0);
  const std::int64_t longest = std::max<std::int64_t>(wait_ms, 1000);
  std::int64_t pause = wait_ms;
  for (unsigned i = 0; i < refusals_before && pause < longest; ++i) pause *= 2;
  return std::chrono::milliseconds(std::min(pause, longest));
}

void TenantLimiters::configure(const config::Config& config) {
  std::lock_guard guard(lock_);
  for (auto* limiters : {&users_, &namespaces_})
    for (auto& [name, limiter] : *limiters) limiter->configure({});
  for (const auto& user : config.users) {
    auto& limiter = users_[user.name];
    if (!limiter) limiter = std::make_unique<TenantLimiter>(user.name);
    limiter->configure(user.limits);
  }
  for (const auto& ns : config.namespaces) {
    if (!ns.limits.any() && !namespaces_.contains(ns.name)) continue;
    auto& limiter = namespaces_[ns.name];
    if (!limiter) limiter = std::make_unique<TenantLimiter>(ns.name);
    limiter->configure(ns.limits);
  }
}

TenantLimiter* TenantLimiters::find_in(Limiters& limiters, std::string_view name) {
  std::lock_guard guard(lock_);
  auto found = limiters.find(std::string(name));
  return found == limiters.end() ? nullptr : found->second.get();
}

std::vector<const TenantLimiter*> TenantLimiters::shown_of(const Limiters& limiters) const {
  std::lock_guard guard(lock_);
  std::vector<const TenantLimiter*> shown;
  for (const auto& [name, limiter] : limiters) {
    auto counters = limiter->counters();
    if (limiter->limits().any() ||
        counters.refused_requests + counters.refused_connections + counters.refused_pipeline > 0)
      shown.push_back(limiter.get());
  }
  std::sort(shown.begin(), shown.end(),
            [](const TenantLimiter* a, const TenantLimiter* b) { return a->name() < b->name(); });
  return shown;
}

}  // namespace santral::router
