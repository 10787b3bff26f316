#pragma once

#include <optional>
#include <string_view>

#include "config/namespace/key_pattern.h"

namespace santral::placement {

// The literal text every key matching a Redis glob starts with: the glob up to its first
// *, ?, [ or backslash.
std::string_view glob_literal_prefix(std::string_view glob);

// What a pattern can say about the keys that start with `prefix` (KEYS/SCAN MATCH narrowing).
// Fields are decided by the first occurrence of the literal after them (see KeyPattern), so a
// field whose next literal already appears in the prefix has the same value in every such key.
struct PrefixReach {
  bool disjoint = false;  // no key with the prefix matches the pattern
  // Every key with the prefix matches, except perhaps the key equal to the prefix itself
  // (when `prefix_unmatched`: a final field would be empty).
  bool covers = false;
  bool prefix_unmatched = false;
  std::optional<std::string_view> shard_key;         // the same in every matching key
  std::optional<std::string_view> shard_key_prefix;  // or what it starts with
};

// `field`: the shard key field (-1: the whole key).
PrefixReach reach(const config::KeyPattern& pattern, int field, std::string_view prefix);

}  // namespace santral::placement
