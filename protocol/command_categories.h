#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace santral::protocol {

// Redis 7.0's ACL categories (COMMAND INFO's acl-categories), in Redis's order: what `+@write`,
// `-@dangerous` and ACL CAT name. A command's categories are a bitmask of these.
enum class AclCategory : std::uint8_t {
  Keyspace,
  Read,
  Write,
  Set,
  Sortedset,
  List,
  Hash,
  String,
  Bitmap,
  Hyperloglog,
  Geo,
  Stream,
  Pubsub,
  Admin,
  Fast,
  Slow,
  Blocking,
  Dangerous,
  Connection,
  Transaction,
  Scripting,
};
inline constexpr std::size_t kAclCategories = static_cast<std::size_t>(AclCategory::Scripting) + 1;

constexpr std::uint32_t category_bit(AclCategory category) {
  return 1u << static_cast<unsigned>(category);
}

// The category's name without '@' ("sortedset"), as ACL CAT lists it.
std::string_view category_name(AclCategory category);
// Case-insensitive, without '@'; nullopt for a name Redis 7.0 does not have.
std::optional<AclCategory> find_category(std::string_view name);
// Every category, in Redis's order.
std::span<const AclCategory> all_categories();

}  // namespace santral::protocol
