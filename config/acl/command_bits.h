#pragma once

#include <string_view>

#include "config/acl/permissions.h"
#include "protocol/command_categories.h"

namespace santral::config {

// The command bitmap of a user, changed the way Redis's acl.c changes it.

// "get", "config|get" (any case); nullptr for an unknown name or a command without that
// subcommand.
const protocol::CommandSpec* find_acl_command(std::string_view name);
// Sets or clears the command's bit, and its subcommands' bits (ACLChangeSelectorPerm).
void set_command(Permissions& user, const protocol::CommandSpec& spec, bool allow);
// Every command and subcommand in the category, each as set_command().
void set_category(Permissions& user, protocol::AclCategory category, bool allow);
void allow_all_commands(Permissions& user);  // +@all
void deny_all_commands(Permissions& user);   // -@all
// The bits of `bits` set (`on`) and clear (`off`) over the commands in `category`.
void count_category(const std::vector<std::uint64_t>& bits, protocol::AclCategory category,
                    std::size_t& on, std::size_t& off);

inline bool command_bit(const std::vector<std::uint64_t>& bits, std::uint16_t id) {
  return (bits[id / 64] >> (id % 64)) & 1u;
}

}  // namespace santral::config
