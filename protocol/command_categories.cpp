#include "protocol/command_categories.h"

#include <array>

#include "protocol/arguments.h"

namespace santral::protocol {
namespace {

constexpr std::array<std::string_view, kAclCategories> kNames = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting",
};

constexpr std::array<AclCategory, kAclCategories> kCategories = [] {
  std::array<AclCategory, kAclCategories> all{};
  for (std::size_t i = 0; i < kAclCategories; ++i) all[i] = static_cast<AclCategory>(i);
  return all;
}();

}  // namespace

std::string_view category_name(AclCategory category) {
  return kNames[static_cast<std::size_t>(category)];
}

std::optional<AclCategory> find_category(std::string_view name) {
  for (std::size_t i = 0; i < kAclCategories; ++i)
    if (equals_nocase(name, kNames[i])) return static_cast<AclCategory>(i);
  return std::nullopt;
}

std::span<const AclCategory> all_categories() {
  return kCategories;
}

}  // namespace santral::protocol
