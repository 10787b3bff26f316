#pragma once

#include <nlohmann/json.hpp>

#include "placement/topology.h"

namespace santral::router {

// /placement: where each kind of key lives, as tables the dashboard draws. Shards are given by
// their index into "shards".
//
//   default:    the distribution's table (ketama ring arcs, modula slots, or none for random)
//   namespaces: in match order, each with its strategy's table:
//     hashed     ring            {points, arcs: [[end, shard], ...]}: a hash h belongs to the
//                                first arc whose end >= h, and past the last end to the first
//     slots      slot_ranges     [{from, to, shard}], inclusive
//     range      ranges          [{from, to, shard}], [from, to), null for an open end
//     directory  groups          [{group, shard}], and its fallback's ring or slot_ranges
//     zone       zones, groups   [{name, shards, ring}], [{group, zone}], default_zone
nlohmann::json placement_json(const placement::Topology& topology);

}  // namespace santral::router
