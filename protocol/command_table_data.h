#pragma once

#include <span>
#include <string_view>

#include "protocol/command_table.h"

namespace santral::protocol {

// The table scripts/gen-command-table.py writes into command_table_data.cpp.
std::span<const CommandSpec> generated_commands();
// The redis-server version whose COMMAND output the table was generated from.
std::string_view generated_from_version();
// How many CommandSpec::id values the table uses.
std::size_t generated_command_ids();

}  // namespace santral::protocol
