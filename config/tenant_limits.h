#pragma once

#include <cstdint>

namespace santral::config {

// `limits:` of one user: what one tenant may take of the routers, so that it cannot starve the
// others (router/runtime/tenant_limiter.h). 0 is no limit; a user without `limits:` has none.
struct TenantLimits {
  // A token bucket shared by the router's workers: `requests_per_s` tokens a second, at most
  // `burst` saved up (requests_per_s when not given). A request without a token is refused.
  std::uint32_t requests_per_s = 0;
  std::uint32_t burst = 0;
  // Connections logged in as the user, on this router; AUTH past it is refused.
  std::uint32_t max_connections = 0;
  // Requests of one connection still waiting for their replies; one more is refused.
  std::uint32_t max_pipeline = 0;
  // A user's only: how long a request without a token may wait for one (its token is reserved
  // in turn, and its connection is not read meanwhile). One that would wait longer is refused,
  // and its connection is not read again for wait_ms, so a client that retries at once is held
  // to one refusal per wait_ms. 0: refused at once, and read on.
  std::uint32_t wait_ms = 0;

  bool any() const { return requests_per_s + max_connections + max_pipeline > 0; }
  bool operator==(const TenantLimits&) const = default;
};

}  // namespace santral::config
