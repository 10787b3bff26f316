#include "placement/change.h"

#include "placement/diff.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace santral::placement {

namespace {

// Hash values sampled evenly over all 2^32: enough to give the moved share to 0.01%.
constexpr std::uint32_t kSamples = 1u << 20;

}  // namespace

PlacementChange compare_placement(const ShardMap& before, const ShardMap& after) {
  PlacementChange change;
  std::set<std::string> old_addresses, new_addresses;
  for (const auto& s : before.shards()) old_addresses.insert(s.address.text());
  for (const auto& s : after.shards()) new_addresses.insert(s.address.text());
  for (const auto& s : after.shards())
    if (!old_addresses.contains(s.address.text())) change.added.push_back(s.name);
  for (const auto& s : before.shards())
    if (!new_addresses.contains(s.address.text())) change.removed.push_back(s.name);

  if (before.distribution() == config::Distribution::Random ||
      after.distribution() == config::Distribution::Random) {
    change.comparable = false;
    return change;
  }
  // The key -> shard function changed (hash, tag, namespace rules): the hash space tells
  // nothing, sampled keys do.
  if (auto why = key_function_change(before, after); !why.empty()) {
    change.moved_fraction = sampled_moved_share(before, after);
    change.sampled_keys = true;
    change.why = std::move(why);
    return change;
  }
  // Owners are compared by address: a shard that is renamed or renumbered has not moved.
  std::uint32_t moved = 0;
  const std::uint32_t step = static_cast<std::uint32_t>((std::uint64_t{1} << 32) / kSamples);
  for (std::uint32_t i = 0; i < kSamples; ++i) {
    std::uint32_t hash = i * step + step / 2;
    const auto& was = before.shard(before.shard_for_hash(hash)).address;
    const auto& is = after.shard(after.shard_for_hash(hash)).address;
    if (was.host != is.host || was.port != is.port) ++moved;
  }
  change.moved_fraction = static_cast<double>(moved) / kSamples;
  return change;
}

std::string PlacementChange::summary() const {
  std::string text;
  if (!added.empty()) text += fmt::format("added {}; ", fmt::join(added, ", "));
  if (!removed.empty()) text += fmt::format("removed {}; ", fmt::join(removed, ", "));
  if (!comparable) return text + "keys are placed at random (distribution: random)";
  if (sampled_keys)
    return text + fmt::format("{}; about {:.2f}% of the keys (from sampled keys) change shard", why,
                              moved_fraction * 100);
  return text + fmt::format("{:.2f}% of the hash space (so of the keys) changes shard",
                            moved_fraction * 100);
}

}  // namespace santral::placement
