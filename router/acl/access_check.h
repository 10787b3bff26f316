#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "config/acl/permissions.h"
#include "protocol/command_table.h"

namespace santral::router {

// What a user may not do with a request, as Redis 7.0's ACLCheckAllPerm decides.
enum class AccessDenial : std::uint8_t { None, Command, Key, Channel };

struct AccessVerdict {
  AccessDenial denial = AccessDenial::None;
  std::uint32_t position = 0;  // Key, Channel: the argument refused

  bool allowed() const { return denial == AccessDenial::None; }
};

// Checks the command (its bit; AUTH and HELLO are always allowed), then each key by the
// flags of the key spec that found it (ACCESS needs a readable pattern, INSERT, DELETE and
// UPDATE a writable one), then the channels of PUBLISH, SPUBLISH, (S)SUBSCRIBE (glob-matched)
// and PSUBSCRIBE (an allowed pattern, literally). `args[0]` is the command's name.
AccessVerdict check_access(const config::Permissions& user, const protocol::CommandSpec& spec,
                           std::span<const std::string_view> args);

// Whether the user's patterns let a command with key spec `flags` use `key`.
bool key_allowed(const config::Permissions& user, std::string_view key, std::uint16_t flags);
// Whether the user may use `channel`; `pattern`: a PSUBSCRIBE pattern, matched literally.
bool channel_allowed(const config::Permissions& user, std::string_view channel, bool pattern);

}  // namespace santral::router
