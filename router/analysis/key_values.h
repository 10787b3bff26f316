#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "config/namespace/key_pattern.h"
#include "placement/shard_map.h"

namespace santral::router {

// How a shard key's value is read from a key: a field of a namespace's pattern, the first group
// (else the whole match) of a regular expression, or the key's hashed part (its hash tag, else
// the whole key: the default placement's shard key).
class KeyValues {
 public:
  static KeyValues field(const config::KeyPattern& pattern, int index);
  static KeyValues regex(const std::string& expression);  // throws std::regex_error
  static KeyValues hashed_part(const placement::ShardMap& map);

  // The value, or nullopt when the key has none. Views point into `key`.
  std::optional<std::string_view> of(std::string_view key) const;
  const std::string& name() const { return name_; }
  // The pattern's field index (-1 when not a field).
  int field_index() const { return field_; }
  // A regular expression's: a placement by it cannot be written in a config.
  bool is_regex() const { return regex_ != nullptr; }

 private:
  std::string name_;
  const config::KeyPattern* pattern_ = nullptr;
  int field_ = -1;
  std::shared_ptr<const std::regex> regex_;
  const placement::ShardMap* map_ = nullptr;
};

// A 64-bit value parsed from `text` when it is a whole number (no sign but '-', no blanks).
std::optional<std::int64_t> whole_number(std::string_view text);

}  // namespace santral::router
