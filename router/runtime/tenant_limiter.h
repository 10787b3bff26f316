#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"

namespace santral::router {

// One user's limits, or one namespace's (config/tenant_limits.h), as every worker of the router
// shares them, and what they refused. All atomics: a request of a limited user costs a
// compare-and-swap on its bucket; one of a user without limits costs two relaxed loads (and a
// client that never logged in as a configured user, none).
//
// The bucket is GCRA's: `tat` is when the bucket would be full again; a request moves it one
// interval (1 s / requests_per_s) later, and is refused when that lands further than `burst`
// intervals from now, or under wait_ms, further than `burst` intervals and wait_ms: then it
// waits until its interval is within the burst (its token is due), and waiters run in turn.
class TenantLimiter {
 public:
  explicit TenantLimiter(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }  // the user's, or the namespace's
  // At start and at each reload (0 everywhere for a user the config no longer has).
  void configure(const config::TenantLimits& limits);
  config::TenantLimits limits() const;

  // A request of this user: false when it is over requests_per_s (counted).
  bool take_request(std::chrono::steady_clock::time_point now) {
    auto interval = interval_ns_.load(std::memory_order_relaxed);
    if (interval == 0) return true;
    return take_slow_path(now, interval, 0).has_value();
  }
  // The same under wait_ms: how long the request must wait for its token, which is its own
  // from now on (0: none, it runs now); nullopt (counted) when that is longer than wait_ms.
  std::optional<std::chrono::nanoseconds> reserve_request(
      std::chrono::steady_clock::time_point now) {
    auto interval = interval_ns_.load(std::memory_order_relaxed);
    if (interval == 0) return std::chrono::nanoseconds(0);
    return take_slow_path(now, interval, wait_ns_.load(std::memory_order_relaxed));
  }
  // A connection with `owed` replies still to come may send one more request; false (counted)
  // when that is past max_pipeline.
  bool admits_pipeline(std::size_t owed) {
    auto most = max_pipeline_.load(std::memory_order_relaxed);
    if (most == 0 || owed < most) return true;
    refused_pipeline_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // A connection logs in as this user: false (counted) when it has max_connections already.
  bool add_connection();
  // A connection logged in as this user went, or logged in as another.
  void remove_connection() { connections_.fetch_sub(1, std::memory_order_relaxed); }

  struct Counters {
    std::uint64_t connections = 0;
    std::uint64_t refused_requests = 0;
    std::uint64_t refused_connections = 0;
    std::uint64_t refused_pipeline = 0;
    std::uint64_t held_requests = 0;  // that waited for their token (wait_ms)
  };
  Counters counters() const;

 private:
  // The wait for a token, if at most `most_wait` (ns).
  std::optional<std::chrono::nanoseconds> take_slow_path(std::chrono::steady_clock::time_point now,
                                                         std::int64_t interval,
                                                         std::int64_t most_wait);

  const std::string name_;
  std::atomic<std::int64_t> interval_ns_{0};  // 1 s / requests_per_s; 0: no rate limit
  std::atomic<std::uint32_t> requests_per_s_{0};
  std::atomic<std::uint32_t> burst_{0};
  std::atomic<std::uint32_t> max_connections_{0};
  std::atomic<std::uint32_t> max_pipeline_{0};
  std::atomic<std::int64_t> wait_ns_{0};
  std::atomic<std::int64_t> tat_ns_{0};
  std::atomic<std::int64_t> connections_{0};
  std::atomic<std::uint64_t> refused_requests_{0};
  std::atomic<std::uint64_t> refused_connections_{0};
  std::atomic<std::uint64_t> refused_pipeline_{0};
  std::atomic<std::uint64_t> held_requests_{0};
};

// How long a connection is not read after a request refused under wait_ms, the
// `refusals_before` + 1-th in a row: wait_ms, doubling with each refusal in a row, up to a
// second or wait_ms if that is longer. A client that retries at once is read less and less
// often, so a tenant of many connections costs a few refusals a second each, not one per
// wait_ms; one that backs off by itself never waits on it.
std::chrono::milliseconds pause_after_refusal(std::uint32_t wait_ms, unsigned refusals_before);

// Every configured user's TenantLimiter and every namespace's, made at the first config that
// names the user or namespace and kept for the life of the process (a client holds a plain
// pointer to its user's, a worker to its namespaces'); looked up only at AUTH and when a
// worker takes a new topology, under a lock.
class TenantLimiters {
 public:
  // The users and namespaces of `config` get their limits; those it no longer names get none.
  void configure(const config::Config& config);
  // The limiter of `user`, or nullptr for a user no config named.
  TenantLimiter* find(std::string_view user) { return find_in(users_, user); }
  // The limiter of namespace `name`, or nullptr when no config gave it limits.
  TenantLimiter* find_namespace(std::string_view name) { return find_in(namespaces_, name); }
  // Those with some limit in force, or that refused something, for INFO.
  std::vector<const TenantLimiter*> shown() const { return shown_of(users_); }
  std::vector<const TenantLimiter*> shown_namespaces() const { return shown_of(namespaces_); }

 private:
  using Limiters = std::unordered_map<std::string, std::unique_ptr<TenantLimiter>>;
  TenantLimiter* find_in(Limiters& limiters, std::string_view name);
  std::vector<const TenantLimiter*> shown_of(const Limiters& limiters) const;

  mutable std::mutex lock_;
  Limiters users_;
  Limiters namespaces_;
};

}  // namespace santral::router
