#include "placement/whatif/replay.h"

#include <stdexcept>

#include <fmt/format.h>

namespace santral::whatif {

std::int16_t namespace_of(const placement::ShardMap& map, std::string_view key,
                          std::string_view& shard_key) {
  std::string_view tag = map.hashed_part(key);
  bool tagged = tag.size() != key.size();
  const auto& spaces = map.namespaces();
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    std::string_view field;
    if (!spaces[i].match(key, field)) continue;
    std::string_view candidate = tagged ? tag : field;
    if (!spaces[i].accepts(candidate)) continue;
    shard_key = candidate;
    return static_cast<std::int16_t>(i);
  }
  shard_key = tag;
  return kDefaultPlacement;
}

Replay replay(const placement::ShardMap& map, const Trace& trace) {
  // ShardMap::shard_for_key places the key; namespace_of names its namespace, and every 4096th
  // key is checked against ShardMap::place (which names it too, but allocates).
  constexpr std::size_t kCheckEvery = 4096;
  Replay out;
  out.shard_count = map.shard_count();
  out.shard.resize(trace.size());
  out.space.resize(trace.size());
  const auto& spaces = map.namespaces();
  for (std::size_t i = 0; i < trace.size(); ++i) {
    std::string_view key = trace.key(i);
    std::string_view shard_key;
    auto space = namespace_of(map, key, shard_key);
    auto shard = map.shard_for_key(key);
    out.space[i] = space;
    out.shard[i] = static_cast<std::uint16_t>(shard);
    if (i % kCheckEvery == 0) {
      auto placement = map.place(key);
      std::string_view expected =
          space == kDefaultPlacement ? std::string_view{} : std::string_view(spaces[space].name());
      if (placement.namespace_name != expected || placement.shard != shard)
        throw std::logic_error(fmt::format("replay disagrees with ShardMap::place on key {}", key));
    }
  }
  return out;
}

}  // namespace santral::whatif
