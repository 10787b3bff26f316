#pragma once

#include <cstddef>
#include <span>

#include "router/analysis/key_values.h"
#include "router/analysis/sampled_request.h"
#include "router/analysis/shard_key_analysis.h"

namespace santral::router {

// The characteristics of the shard key `values` reads, over the target's sampled requests
// (each an access) and the keys drawn from the shards (for the distinct count only), for a
// cluster of `shards` shards.
KeyFigures key_figures(const KeyValues& values, std::span<const SampledRequest* const> requests,
                       std::span<const StoredKey* const> stored, std::size_t shards);

// Pearson's correlation of ys with their order (0, 1, 2, ...); nullopt when it is undefined
// (fewer than two points, or every y equal).
std::optional<double> order_correlation(std::span<const double> ys);

}  // namespace santral::router
