#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "router/backend/backend_connection.h"

namespace santral::router {

// MIGRATE goes without REPLACE (migrate.h), so a key whose name the target holds already is
// answered BUSYKEY rather than overwritten. The two copies are then compared (DUMP):
//   - the same value: the source's copy is deleted (a MIGRATE that failed half-way left it);
//   - another value: neither is dropped. The target's copy stays in force, the source's is kept
//     beside it, on the source, as `santral:conflict:<key>` (`santral:conflict:<key>:<n>` when
//     that name is taken), with a warning in the log and a count in INFO (move_conflicts): the
//     operator decides which one holds;
//   - the source has no copy any more: nothing to do.
// The MIGRATE is then sent again, and finds the key gone from its source.
inline constexpr std::string_view kConflictPrefix = "santral:conflict:";

// A MIGRATE's answer that a key already exists on its target.
bool busy_key(std::string_view reply);

// Settles each of `keys` between `source` and `target` (connections in the keys' database) as
// above; `done` gets "" once every key is settled, or what went wrong (a shard's answer).
void settle_busy_keys(BackendConnection& source, BackendConnection& target,
                      std::vector<std::string> keys, std::function<void(std::string error)> done);

// Conflicts kept since this process started.
std::uint64_t move_conflicts();

}  // namespace santral::router
