#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "config/config.h"

namespace santral::router {

// The migration gate (migration_gate.h) keeps one router's MIGRATEs out of a cycle; routers of
// a fleet keep theirs out of one together, at the shards. Before a MIGRATE to shard T, a router
// marks T as receiving (a field of its own, with an expiry, in the hash `santral:receiving`
// of T's database 0); it then sends the MIGRATE inside a script that runs it only while its
// source holds no live mark, and takes its mark back once the reply is in. A shard runs one
// script at a time, so while it migrates nobody can mark it, and once marked it migrates to
// nobody: no shard both sends and receives, and no cycle can form, whoever sent what. A
// refused MIGRATE (`refused_as_receiving`) moved nothing; it is sent again a moment later.
// A mark left by a router that died expires after resharding.migrate_timeout_ms.
inline constexpr std::string_view kReceivingMarkKey = "santral:receiving";

// A name for one mark, unique in this process and, with a random part, in the fleet.
std::string receiving_mark_holder();

// To the target: marks it as receiving for `holder` (replies :1). Leaves the connection in
// `database`.
std::string mark_receiving(std::string_view holder, std::chrono::milliseconds ttl, int database);
// To the target, once the MIGRATE's reply is in: takes the mark back.
std::string unmark_receiving(std::string_view holder, int database);

// To the source: migrate_command's MIGRATE (migrate.h), run only while the source is marked
// as receiving by nobody; else the error `refused_as_receiving` knows.
std::string migrate_unless_receiving(const config::Config& config, const config::Endpoint& target,
                                     int database, std::span<const std::string_view> keys);
bool refused_as_receiving(std::string_view reply);

}  // namespace santral::router
