#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace santral::router {

// MIGRATE <target> <port> "" <database> <timeout> REPLACE [AUTH ...] KEYS <keys>, sent to the
// shard a key is leaving. Atomic per call on that shard: each key that exists moves with its
// TTL and is deleted there; the others are skipped (NOKEY when none exists). REPLACE because
// the source's copy is the one in force: a copy already on the target can only be left over
// from a MIGRATE that failed half-way.
// MIGRATE's words before KEYS: "MIGRATE", host, port, "", database, timeout, "REPLACE" and the
// login, if any.
std::vector<std::string> migrate_arguments(const config::Config& config,
                                           const config::Endpoint& target, int database);
std::string migrate_command(const config::Config& config, const config::Endpoint& target,
                            int database, std::span<const std::string_view> keys);

// +OK or +NOKEY: every key named is on the target now (or exists nowhere).
bool migrated(std::string_view reply);

}  // namespace santral::router
