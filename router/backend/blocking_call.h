#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "router/backend/shard_login.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

// One short connection to `server`: AUTH as `login` (when it has a password; `login_key` names
// where it is configured, for the error when it is refused), then `commands`
// back to back, and their replies (whole RESP frames) in order; over TLS when `tls` has a
// shards context (a shard with `tls: true`, checked as backend.tls says). Blocking, and
// bounded by `timeout` in all: for control threads and the config loader, never the request
// path.
// Throws std::runtime_error saying what failed ("127.0.0.1:26379 did not answer within 500 ms
// (connecting)", a refused login, ...).
std::vector<std::string> blocking_call(const config::Endpoint& server, const ShardLogin& login,
                                       std::string_view login_key,
                                       const std::vector<std::vector<std::string>>& commands,
                                       std::chrono::milliseconds timeout,
                                       const TlsContexts* tls = nullptr);

bool is_null_reply(const std::string& frame);

}  // namespace santral::router
