#pragma once

#include <string_view>

#include "config/config.h"
#include "router/analysis/shard_key_analysis.h"

namespace santral::router {

// The report's warnings: monotonic and low-cardinality keys, a value too large to balance (a
// jumbo), too few samples, routers not covered.
void add_warnings(AnalysisReport& report);

// Picks the recommended what-if and says why in one sentence, with the namespace's config
// lines when it changes the namespace: the most even placement that is not excluded (a row the
// warnings speak against, such as ranges by a monotonic key, is excluded here too); among
// those within 10% of it, the one whose SCAN visits fewest shards, reads fewest stores, keeps
// the current placement, and moves fewest keys when the cluster grows.
void recommend(AnalysisReport& report, const config::Config& config, std::string_view target);

}  // namespace santral::router
