#include "config/acl/acl_describe.h"

#include <array>
#include <climits>

#include "config/acl/command_bits.h"
#include "config/acl/password_hash.h"

namespace santral::config {
namespace {

using protocol::AclCategory;
using protocol::CommandSpec;

void append(std::string& out, std::string_view word) {
  if (!out.empty()) out += ' ';
  out += word;
}

std::string key_pattern_text(const AclKeyPattern& pattern) {
  if (pattern.access == kAllKeyAccess) return "~" + pattern.glob;
  std::string text = "%";
  if (pattern.access & kReadKeys) text += 'R';
  if (pattern.access & kWriteKeys) text += 'W';
  return text + "~" + pattern.glob;
}

}  // namespace

// Redis's ACLDescribeSelectorCommandRules: the rules are tried on a copy (`described`) as
// they are chosen, and `remaining` holds what is still to be explained; each round takes the
// category with the fewest differences that has more in common than not. Single commands fix
// whatever the categories leave different, in table order (Redis: its dict's order).
std::string describe_commands(const Permissions& user) {
  bool additive = !user.future_commands;
  std::string rules = additive ? "-@all" : "+@all";
  Permissions described;
  additive ? deny_all_commands(described) : allow_all_commands(described);
  Permissions remaining;
  remaining.commands = user.commands;
  std::array<bool, protocol::kAclCategories> applied{};
  while (true) {
    int best = -1;
    std::size_t min_diff = INT_MAX;
    std::size_t max_same = 0;
    for (AclCategory category : protocol::all_categories()) {
      auto j = static_cast<std::size_t>(category);
      if (applied[j]) continue;
      std::size_t on = 0;
      std::size_t off = 0;
      count_category(remaining.commands, category, on, off);
      std::size_t diff = additive ? off : on;
      std::size_t same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    auto category = static_cast<AclCategory>(best);
    set_category(described, category, additive);
    set_category(remaining, category, !additive);
    append(rules, std::string(additive ? "+@" : "-@") + std::string(category_name(category)));
    applied[static_cast<std::size_t>(best)] = true;
  }
  auto fix = [&](const CommandSpec& spec) {
    bool wanted = command_bit(user.commands, spec.id);
    if (wanted == command_bit(described.commands, spec.id)) return;
    append(rules, std::string(wanted ? "+" : "-") + std::string(spec.name));
    set_command(described, spec, wanted);
  };
  for (const CommandSpec& spec : protocol::all_commands()) {
    fix(spec);
    for (const CommandSpec& sub : spec.subcommands) fix(sub);
  }
  return rules;
}

std::string describe_keys(const Permissions& user) {
  if (user.all_keys) return "~*";
  std::string out;
  for (const auto& pattern : user.keys) append(out, key_pattern_text(pattern));
  return out;
}

std::string describe_channels(const Permissions& user) {
  if (user.all_channels) return "&*";
  std::string out;
  for (const auto& channel : user.channels) append(out, "&" + channel);
  return out;
}

std::string describe_user(std::string_view name, const Permissions& user) {
  std::string out = "user ";
  out += name;
  append(out, user.enabled ? "on" : "off");
  if (user.nopass) append(out, "nopass");
  for (const auto& hash : user.passwords) append(out, "#" + password_hash_hex(hash));
  std::string keys = describe_keys(user);
  if (!keys.empty()) append(out, keys);
  if (!user.all_channels) append(out, "resetchannels");
  std::string channels = describe_channels(user);
  if (!channels.empty()) append(out, channels);
  append(out, describe_commands(user));
  return out;
}

}  // namespace santral::config
