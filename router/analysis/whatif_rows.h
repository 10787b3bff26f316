#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/analysis/key_values.h"
#include "router/analysis/sampled_request.h"
#include "router/analysis/shard_key_analysis.h"

namespace santral::router {

// The target's keys as a what-if replays them: each sampled or drawn key with its sampled
// accesses (0: drawn only), and the stored keys it stands for (a drawn key its draws' weight, a
// key only requested none; every key 1 when nothing was drawn), for the moved share.
struct TargetKeys {
  std::vector<std::pair<std::string_view, std::uint32_t>> lines;  // sorted by key
  std::vector<double> weights;                                    // per line
  bool accessed = false;                                          // some line has accesses
};
TargetKeys target_keys(std::span<const SampledRequest* const> requests,
                       std::span<const StoredKey* const> stored);

// Where the what-if happens: the config in force, the target's namespace (none for a glob of
// keys), and the SCAN MATCH pattern whose shards each row counts ("" : all shards).
struct WhatIfScope {
  const config::Config& config;
  const placement::ShardMap& map;
  std::optional<std::size_t> ns;
  std::string scan_pattern;
};

// The current placement of the target's keys.
WhatIf current_row(const WhatIfScope& scope, const KeyFigures& key, const TargetKeys& keys);

// The target's keys placed by `values` under a hashed ring, equal slot ranges, ranges at the
// sampled quantiles and a directory of its values. A key that is a field of the namespace's
// pattern replays the keys themselves through the namespace with that shard key; any other (a
// regex, the hashed part) replays "<value>\x1f<key>" through a namespace placed by the value.
std::vector<WhatIf> strategy_rows(const WhatIfScope& scope, const KeyValues& values,
                                  const KeyFigures& figures, const TargetKeys& keys);

}  // namespace santral::router
