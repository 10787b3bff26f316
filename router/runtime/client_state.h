#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config/acl/permissions.h"
#include "router/tracking/tracking_settings.h"

namespace santral::router {

class TenantLimiter;

// What Santral remembers about one client connection between its requests.
struct ClientState {
  std::uint64_t id = 0;
  std::string name;   // CLIENT SETNAME
  std::string peer;   // "ip:port" of the client
  std::string local;  // "ip:port" Santral accepted it on
  std::string user = "default";
  bool authenticated = false;
  bool monitoring = false;  // MONITOR: every command the router runs is pushed to it (monitors.h)
  // The user's ACL rules (router/acl/), or nullptr when it may do everything; resolved again
  // by name whenever the topology version (a reload) is not `permissions_version`.
  std::shared_ptr<const config::Permissions> permissions;
  std::uint64_t permissions_version = 0;
  // The limits of the configured user it logged in as (router/runtime/tenant_limiter.h), which
  // counts it among that user's connections; nullptr before AUTH and for an unconfigured user.
  TenantLimiter* limiter = nullptr;
  int protocol = 2;                        // RESP version chosen with HELLO
  int database = 0;                        // SELECTed database
  bool reply_off = false;                  // CLIENT REPLY OFF
  bool skip_next = false;                  // CLIENT REPLY SKIP: the next command's reply is dropped
  TrackingSettings tracking;               // CLIENT TRACKING
  std::string_view last_command = "NULL";  // a name from the command table (static storage)
  std::chrono::steady_clock::time_point connected_at = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_active = connected_at;
  // How many of its requests were dispatched to the end: the number of the one being
  // dispatched now, which a pull's outcome names (router/routes/key_pull.h).
  std::uint64_t requests_dispatched = 0;
  // The topology version its requests were last routed with (router/plan/dispatch.cpp).
  std::uint64_t routed_version = 0;
};

}  // namespace santral::router
