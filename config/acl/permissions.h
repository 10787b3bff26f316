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
  bool all_keys = false;
  std::vector<AclKeyPattern> keys;
  bool all_channels = false;
  std::vector<std::string> channels;

  bool allows(const protocol::CommandSpec& spec) const {
    return (commands[spec.id / 64] >> (spec.id % 64)) & 1u;
  }
  // Everything allowed: the router skips its checks.
  bool unrestricted() const { return all_commands && all_keys && all_channels; }
  bool operator==(const Permissions&) const = default;
};

}  // namespace santral::config
