#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace santral::router {

// MIGRATE <target> <port> "" <database> <timeout> [AUTH ...] KEYS <keys>, sent to the shard a
// key is leaving. Atomic per call on that shard: each key that exists moves with its TTL and is
// deleted there; the others are skipped (NOKEY when none exists). Without REPLACE: a copy
// already on the target is not overwritten but answered BUSYKEY, and the two copies are
// compared (key_conflict.h). A copy there may be one a MIGRATE that failed half-way left, or one
// a request that ran late wrote: which one is newer, only the data can say.
// MIGRATE's words before KEYS: "MIGRATE", host, port, "", database, timeout and the login, if
// any.
std::vector<std::string> migrate_arguments(const config::Config& config,
                                           const config::Endpoint& target, int database);
std::string migrate_command(const config::Config& config, const config::Endpoint& target,
                            int database, std::span<const std::string_view> keys);

// +OK or +NOKEY: every key named is on the target now (or exists nowhere).
bool migrated(std::string_view reply);

// How long Santral waits for a MIGRATE's answer, a pull's, the walk's and an UNSALT fold's
// alike: a request's timeout plus twice MIGRATE's own (the source may wait that long for its
// target to connect, then to restore). A MIGRATE that ends is seen to end; one given up on
// drains until its shard proves it done or dead (draining_connections.h).
std::chrono::milliseconds migrate_answer_timeout(const config::Config& config);

}  // namespace santral::router
