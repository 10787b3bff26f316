#include "router/runtime/tenant_limiter.h"

#include <catch2/catch.hpp>

using namespace santral::router;
using namespace std::chrono_literals;

TEST_CASE("requests_per_s: a bucket of `burst` requests refilled at the rate") {
  TenantLimiter limiter("batch");
  limiter.configure({.requests_per_s = 10, .burst = 2});
  auto t0 = std::chrono::steady_clock::time_point(1000s);
  CHECK(limiter.take_request(t0));
  CHECK(limiter.take_request(t0));
  CHECK_FALSE(limiter.take_request(t0));
  CHECK_FALSE(limiter.take_request(t0 + 50ms));
  CHECK(limiter.take_request(t0 + 100ms));  // one interval later, one token
  CHECK_FALSE(limiter.take_request(t0 + 100ms));
  CHECK(limiter.take_request(t0 + 10s));  // saved up, but never more than the burst
  CHECK(limiter.take_request(t0 + 10s));
  CHECK_FALSE(limiter.take_request(t0 + 10s));
  CHECK(limiter.counters().refused_requests == 4);
  // Without a rate, nothing is refused.
  limiter.configure({});
  for (int i = 0; i < 1000; ++i) CHECK(limiter.take_request(t0));
}

TEST_CASE("wait_ms: a request without a token reserves the next one due within wait_ms") {
  TenantLimiter limiter("patient");
  limiter.configure({.requests_per_s = 10, .burst = 1, .wait_ms = 250});
  auto t0 = std::chrono::steady_clock::time_point(1000s);
  CHECK(limiter.reserve_request(t0) == 0ns);           // the burst's token
  CHECK(limiter.reserve_request(t0) == 100ms);         // the next, in turn
  CHECK(limiter.reserve_request(t0) == 200ms);         // and the one after
  CHECK_FALSE(limiter.reserve_request(t0));            // 300 ms off: past wait_ms, refused
  CHECK(limiter.reserve_request(t0 + 50ms) == 250ms);  // a refusal reserved nothing
  CHECK(limiter.reserve_request(t0 + 10s) == 0ns);
  auto counters = limiter.counters();
  CHECK(counters.held_requests == 3);
  CHECK(counters.refused_requests == 1);
  CHECK(limiter.limits().wait_ms == 250);
  // Without wait_ms the same request is refused at once.
  limiter.configure({.requests_per_s = 10, .burst = 1});
  CHECK(limiter.reserve_request(t0 + 20s) == 0ns);
  CHECK_FALSE(limiter.reserve_request(t0 + 20s));
}

TEST_CASE("wait_ms: after refusals in a row the connection is left unread longer each time") {
  CHECK(pause_after_refusal(100, 0) == 100ms);
  CHECK(pause_after_refusal(100, 1) == 200ms);
  CHECK(pause_after_refusal(100, 3) == 800ms);
  CHECK(pause_after_refusal(100, 4) == 1000ms);  // a second at most
  CHECK(pause_after_refusal(100, 4'000'000'000U) == 1000ms);
  CHECK(pause_after_refusal(300, 2) == 1000ms);
  CHECK(pause_after_refusal(2500, 0) == 2500ms);  // or wait_ms, if that is longer
  CHECK(pause_after_refusal(2500, 6) == 2500ms);
  CHECK(pause_after_refusal(0, 9) == 0ms);
}

TEST_CASE("max_connections and max_pipeline") {
  TenantLimiter limiter("few");
  limiter.configure({.max_connections = 2, .max_pipeline = 3});
  CHECK(limiter.add_connection());
  CHECK(limiter.add_connection());
  CHECK_FALSE(limiter.add_connection());
  limiter.remove_connection();
  CHECK(limiter.add_connection());
  CHECK(limiter.admits_pipeline(2));
  CHECK_FALSE(limiter.admits_pipeline(3));
  auto counters = limiter.counters();
  CHECK(counters.connections == 2);
  CHECK(counters.refused_connections == 1);
  CHECK(counters.refused_pipeline == 1);
}

TEST_CASE("TenantLimiters: one limiter per configured user, kept across reloads") {
  santral::config::Config config;
  config.users.push_back({"batch", nullptr, {.requests_per_s = 5}});
  config.users.push_back({"free", nullptr, {}});
  TenantLimiters limiters;
  limiters.configure(config);
  auto* batch = limiters.find("batch");
  REQUIRE(batch != nullptr);
  CHECK(limiters.find("free") != nullptr);
  CHECK(limiters.find("nobody") == nullptr);
  REQUIRE(limiters.shown().size() == 1);  // only users with limits
  CHECK(batch->limits().burst == 5);      // a second's worth when not given
  config.users.clear();
  limiters.configure(config);  // the user left the config: its limiter stays, unlimited
  CHECK(limiters.find("batch") == batch);
  CHECK_FALSE(batch->limits().any());
}
