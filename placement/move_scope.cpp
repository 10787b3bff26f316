#include "placement/move_scope.h"

#include <algorithm>

#include "placement/diff.h"

namespace santral::placement {

namespace {

// Every shard both maps name has the same address in both.
bool same_addresses(const ShardMap& from, const ShardMap& to) {
  for (const auto& shard : to.shards()) {
    auto was = std::find_if(from.shards().begin(), from.shards().end(),
                            [&shard](const auto& s) { return s.name == shard.name; });
    if (was != from.shards().end() && was->address.text() != shard.address.text()) return false;
  }
  return true;
}

}  // namespace

void settle_unmoved(Move& move, const ShardMap& to) {
  const auto& namespaces = to.namespaces();
  move.namespaces = namespaces.data();
  move.settled.assign(namespaces.size(), 0);
  move.default_settled = false;
  const ShardMap& from = *move.from;
  if (!key_function_change(from, to).empty() || !same_addresses(from, to)) return;
  auto units = moving_units(from, to);
  auto moves = [&units](const std::string& placement) {
    return std::any_of(units.begin(), units.end(), [&placement](const MovingUnit& unit) {
      return unit.placement == placement;
    });
  };
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    bool same_place =
        i < from.namespaces().size() && from.namespaces()[i].name() == namespaces[i].name();
    move.settled[i] = same_place && !moves(namespaces[i].name()) ? 1 : 0;
  }
  move.default_settled = from.distribution() != config::Distribution::Random &&
                         to.distribution() != config::Distribution::Random && !moves("default");
}

}  // namespace santral::placement
