#pragma once

#include "config/config.h"
#include "placement/shard_map.h"
#include "placement/whatif/replay.h"
#include "placement/whatif/trace.h"

namespace santral::whatif {

// The config after one more shard joins, each namespace growing by its strategy's natural rule
// (loads are the trace's accesses, as placed by `replay` under `map`, built from `config`):
//   default placement  the shard joins the ketama ring (modula: the modulus grows)
//   hashed             the shard joins the namespace's ring
//   slots              every shard hands its highest slots to the new one, 1/(n+1) of its count
//                      (as redis-cli --cluster rebalance fills an empty node)
//   range              the busiest range splits at its median access; the upper part moves to
//                      the new shard (a MongoDB chunk split and migration)
//   directory          the new shard takes whole groups from shards above the mean load until
//                      it carries the mean (fill_new_shard); unlisted groups follow the
//                      fallback's rule
//   zone               the shard joins the busiest zone
config::Config with_added_shard(const config::Config& config, const placement::ShardMap& map,
                                const Trace& trace, const Replay& replay);

}  // namespace santral::whatif
