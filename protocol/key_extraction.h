#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/command_table.h"

namespace santral::protocol {

// Finds which arguments of a command are keys, the way Redis 7's getKeysFromCommandWithSpecs
// does: by the command's key specs, and for the few commands whose specs cannot say (SORT's
// STORE, MIGRATE's KEYS) by the same special rules Redis applies. `args[0]` is the command
// name (for a subcommand, args[1] is its name). Fills `positions` (indexes into args) and
// returns false when the arguments are malformed so that no keys can be found (e.g. a
// numkeys that is not a number); Redis would answer such a command with a syntax error.
bool find_keys(const CommandSpec& spec, std::span<const std::string_view> args,
               std::vector<std::uint32_t>& positions);

// A key's position with the flags of the key spec that found it (KeySpec::Flag bits), as
// Redis's ACL checks them: ACCESS needs read permission, INSERT, DELETE or UPDATE write.
struct KeyReference {
  std::uint32_t position = 0;
  std::uint16_t flags = 0;
};
// find_keys() with each key's flags; false when no keys can be found.
bool find_key_references(const CommandSpec& spec, std::span<const std::string_view> args,
                         std::vector<KeyReference>& keys);

}  // namespace santral::protocol
