#include "tools/placement_bench/big_map.h"

#include <random>

#include <fmt/format.h>

namespace santral::tools {

std::string big_map_yaml(const BigMapSize& size, int first_port) {
  std::string yaml = "listen: 127.0.0.1:6380\nhash: murmur\ndistribution: ketama\nshards:\n";
  for (std::size_t i = 0; i < size.shards; ++i)
    yaml += fmt::format("  - {{name: s{}, address: 127.0.0.1:{}}}\n", i,
                        first_port + static_cast<int>(i % 40000));
  yaml += "namespaces:\n";
  yaml += "  - name: slotted\n    match: \"slot:{id}\"\n    strategy: slots\n    slots:\n";
  const std::size_t kSlots = 16384;
  for (std::size_t r = 0; r < size.slot_ranges; ++r) {
    std::size_t from = r * kSlots / size.slot_ranges;
    std::size_t to = (r + 1) * kSlots / size.slot_ranges - 1;
    yaml += fmt::format("      - {{shard: s{}, from: {}, to: {}}}\n", r % size.shards, from, to);
  }
  yaml +=
      "  - name: ranged\n    match: \"range:{n}\"\n    strategy: range\n    order: numeric\n"
      "    ranges:\n";
  for (std::size_t r = 0; r < size.ranges; ++r) {
    std::string from = r == 0 ? "" : fmt::format(", from: {}", r * 1000);
    std::string to = r + 1 == size.ranges ? "" : fmt::format(", to: {}", (r + 1) * 1000);
    yaml += fmt::format("      - {{shard: s{}{}{}}}\n", r % size.shards, from, to);
  }
  yaml +=
      "  - name: orders\n    match: \"order:{seller}:{id}\"\n    shard_key: seller\n"
      "    strategy: directory\n    groups:\n";
  for (std::size_t g = 0; g < size.groups; ++g)
    yaml += fmt::format("      seller{}: s{}\n", g, (g * 7919) % size.shards);
  yaml += "    fallback: {strategy: hashed}\n";
  return yaml;
}

BenchKeys bench_keys(const BigMapSize& size, std::size_t count) {
  std::mt19937_64 random(42);
  auto below = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random);
  };
  BenchKeys keys;
  for (std::size_t i = 0; i < count; ++i) {
    keys.ketama.push_back(fmt::format("user:{}", below(100000000)));
    keys.slots.push_back(fmt::format("slot:{}", below(100000000)));
    keys.ranges.push_back(fmt::format("range:{}", below(size.ranges * 1000)));
    keys.directory.push_back(fmt::format("order:seller{}:{}", below(size.groups), below(1000)));
  }
  return keys;
}

}  // namespace santral::tools
