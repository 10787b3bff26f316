#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/namespace/namespace_config.h"

namespace santral::config {

// A range namespace's table: adjacent [from, to) ranges on the shard key, in byte order or as
// signed 64-bit integers.
class RangeTable {
 public:
  RangeTable(RangeOrder order, const std::vector<KeyRange>& ranges);

  // The range holding `shard_key`; nullopt when it falls outside every range, or (numeric
  // order) is not a whole number. Such keys are not in the namespace.
  std::optional<std::size_t> find(std::string_view shard_key) const;
  std::size_t shard(std::size_t range) const { return ranges_[range].shard; }
  std::size_t size() const { return ranges_.size(); }
  // True when every shard key falls in some range (open at both ends, lexical order).
  bool total() const;
  bool numeric() const { return order_ == RangeOrder::Numeric; }
  std::string label(std::size_t range) const;  // "[m, t)", "[-inf, m)", "[t, +inf)"
  // The smallest shard key of a range that has a lower bound (nullopt: open below).
  std::optional<std::string> lower_bound(std::size_t range) const;
  // The shards of the ranges that can hold a shard key starting with `prefix`.
  std::vector<std::size_t> shards_for_prefix(std::string_view prefix) const;

 private:
  struct Range {
    std::optional<std::string> from, to;
    std::optional<std::int64_t> low, high;  // numeric order: from, to as numbers
    std::size_t shard;
  };
  bool overlaps(const Range& r, std::int64_t lo, std::int64_t hi) const;  // [lo, hi] closed

  RangeOrder order_;
  std::vector<Range> ranges_;
};

// A signed 64-bit integer in decimal ("-42", "007"); nullopt for anything else.
std::optional<std::int64_t> parse_int64(std::string_view text);

}  // namespace santral::config
