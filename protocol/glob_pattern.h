#pragma once

#include <string_view>

namespace santral::protocol {

// Redis's glob matching (util.c stringmatchlen), byte for byte: `*`, `?`, `[abc]`, `[^a-z]`
// (a reversed range counts too), `\x` for a literal x. Both sides may hold any bytes, NUL
// included. What ACL key and channel patterns use, and KEYS and SCAN ... MATCH on a shard.
bool glob_matches(std::string_view pattern, std::string_view text);

}  // namespace santral::protocol
