#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/command_table.h"

namespace santral::config {

using PasswordHash = std::array<unsigned char, 32>;  // SHA-256

// What a key pattern lets a command do with the keys it matches (`%R~`, `%W~`, `~`).
enum KeyAccess : std::uint8_t { kReadKeys = 1u << 0, kWriteKeys = 1u << 1, kAllKeyAccess = 3 };

struct AclKeyPattern {
  std::string glob;
  std::uint8_t access = kAllKeyAccess;
  bool operator==(const AclKeyPattern&) const = default;
};

// One user's permissions as Redis 7.0's ACL SETUSER leaves them (its root selector; Santral
// has no other selectors). Built once by apply_acl_rules() (config/acl/acl_rules.h) and never
// changed after: the router shares it between workers.
struct Permissions {
  bool enabled = false;  // on / off
  bool nopass = false;
  std::vector<PasswordHash> passwords;  // in the order added
  // One bit per CommandSpec::id. `all_commands`: every bit set and nothing removed since
  // (Redis's ALLCOMMANDS); `future_commands`: the last +@all was not undone by -@all, which
  // decides whether ACL LIST starts with +@all or -@all.
  std::vector<std::uint64_t> commands;
  bool all_commands = false;
  bool future_commands = false;
  // The category rules since the last +@all / -@all, in order ({0, true}: +@all): a command
  // learned from the shards has no bit, so they are replayed on its categories, as Redis
  // recomputes a user's bits for a command a module adds later.
  struct CategoryRule {
    std::uint32_t categories = 0;  // one category_bit(); 0: every command
    bool allow = false;
    bool operator==(const CategoryRule&) const = default;
  };
  std::vector<CategoryRule> category_rules;
  bool all_keys = false;
  std::vector<AclKeyPattern> keys;
  bool all_channels = false;
  std::vector<std::string> channels;

  bool allows(const protocol::CommandSpec& spec) const {
    if (spec.id == protocol::kLearnedCommandId) return allows_categories(spec.categories);
    return (commands[spec.id / 64] >> (spec.id % 64)) & 1u;
  }
  bool allows_categories(std::uint32_t categories) const {
    bool allowed = false;
    for (const auto& rule : category_rules)
      if (rule.categories == 0 || (categories & rule.categories) != 0) allowed = rule.allow;
    return allowed;
  }
  // Everything allowed: the router skips its checks.
  bool unrestricted() const { return all_commands && all_keys && all_channels; }
  bool operator==(const Permissions&) const = default;
};

}  // namespace santral::config
