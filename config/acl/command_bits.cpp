#include "config/acl/command_bits.h"

namespace santral::config {
namespace {

using protocol::CommandSpec;

std::size_t bitmap_words() {
  return (protocol::command_id_count() + 63) / 64;
}

void set_bit(Permissions& user, std::uint16_t id, bool value) {
  std::uint64_t mask = std::uint64_t{1} << (id % 64);
  if (value) {
    user.commands[id / 64] |= mask;
  } else {
    user.commands[id / 64] &= ~mask;
    user.all_commands = false;
  }
}

// Calls visit(spec) for every command and subcommand, in table order.
template <typename Visit>
void for_each_command(Visit&& visit) {
  for (const CommandSpec& spec : protocol::all_commands()) {
    visit(spec);
    for (const CommandSpec& sub : spec.subcommands) visit(sub);
  }
}

}  // namespace

const CommandSpec* find_acl_command(std::string_view name) {
  std::size_t bar = name.find('|');
  if (bar == std::string_view::npos) return protocol::find_command(name);
  if (name.find('|', bar + 1) != std::string_view::npos) return nullptr;
  const CommandSpec* container = protocol::find_command(name.substr(0, bar));
  if (container == nullptr || container->subcommands.empty()) return nullptr;
  return protocol::find_subcommand(*container, name.substr(bar + 1));
}

void set_command(Permissions& user, const CommandSpec& spec, bool allow) {
  set_bit(user, spec.id, allow);
  for (const CommandSpec& sub : spec.subcommands) set_bit(user, sub.id, allow);
}

void set_category(Permissions& user, protocol::AclCategory category, bool allow) {
  for_each_command([&](const CommandSpec& spec) {
    if (spec.in(category)) set_command(user, spec, allow);
  });
  user.category_rules.push_back({protocol::category_bit(category), allow});
}

void allow_all_commands(Permissions& user) {
  user.commands.assign(bitmap_words(), ~std::uint64_t{0});
  user.all_commands = true;
  user.future_commands = true;
  user.category_rules = {{0, true}};
}

void deny_all_commands(Permissions& user) {
  user.commands.assign(bitmap_words(), 0);
  user.all_commands = false;
  user.future_commands = false;
  user.category_rules.clear();
}

void count_category(const std::vector<std::uint64_t>& bits, protocol::AclCategory category,
                    std::size_t& on, std::size_t& off) {
  on = off = 0;
  for_each_command([&](const CommandSpec& spec) {
    if (!spec.in(category)) return;
    if (command_bit(bits, spec.id)) {
      ++on;
    } else {
      ++off;
    }
  });
}

}  // namespace santral::config
