#include "config/acl/acl_rules.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "config/acl/command_bits.h"
#include "config/acl/password_hash.h"
#include "protocol/arguments.h"

namespace santral::config {
namespace {

using protocol::CommandSpec;

// Redis's reasons (acl.c ACLSetUserStringError), by the errno it sets.
constexpr std::string_view kUnknownName = "Unknown command or category name in ACL";
constexpr std::string_view kSyntax = "Syntax error";
constexpr std::string_view kAfterAllKeys =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
    "any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kAfterAllChannels =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "
    "have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr std::string_view kSubcommandFirstArg =
    "Allowing first-arg of a subcommand is not supported";
constexpr std::string_view kFirstArg =
    "santral: first-arg rules (+command|arg for a command without subcommands) are not "
    "supported; allow the command or a category instead";
constexpr std::string_view kSelectors =
    "santral: selectors '(...)' are not supported; give the user its root permissions only";

std::string failure(std::string_view rule, std::string_view reason) {
  return fmt::format("Error in ACL SETUSER modifier '{}': {}", rule, reason);
}

void add_password(Permissions& user, const PasswordHash& hash) {
  if (std::find(user.passwords.begin(), user.passwords.end(), hash) == user.passwords.end())
    user.passwords.push_back(hash);
  user.nopass = false;
}

bool remove_password(Permissions& user, const PasswordHash& hash) {
  auto it = std::find(user.passwords.begin(), user.passwords.end(), hash);
  if (it == user.passwords.end()) return false;
  user.passwords.erase(it);
  user.nopass = false;
  return true;
}

// ~pattern and %R~ / %W~ / %RW~pattern.
std::string add_key_pattern(Permissions& user, std::string_view rule) {
  std::uint8_t access = kAllKeyAccess;
  std::size_t offset = 1;
  if (rule[0] == '%') {
    access = 0;
    for (; offset < rule.size(); ++offset) {
      char c = static_cast<char>(std::toupper(static_cast<unsigned char>(rule[offset])));
      if (c == 'R' && !(access & kReadKeys)) {
        access |= kReadKeys;
      } else if (c == 'W' && !(access & kWriteKeys)) {
        access |= kWriteKeys;
      } else if (rule[offset] == '~') {
        ++offset;
        break;
      } else {
        return failure(rule, kSyntax);
      }
    }
    if (access == 0 || offset > rule.size()) return failure(rule, kSyntax);
  }
  if (user.all_keys) return failure(rule, kAfterAllKeys);
  AclKeyPattern pattern{std::string(rule.substr(std::min(offset, rule.size()))), access};
  if (std::find(user.keys.begin(), user.keys.end(), pattern) == user.keys.end())
    user.keys.push_back(std::move(pattern));
  return {};
}

std::string add_channel(Permissions& user, std::string_view rule) {
  if (user.all_channels) return failure(rule, kAfterAllChannels);
  std::string channel(rule.substr(1));
  if (std::find(user.channels.begin(), user.channels.end(), channel) == user.channels.end())
    user.channels.push_back(std::move(channel));
  return {};
}

// +name, -name, +container|sub, -container|sub (never a first-arg of another command).
std::string change_command(Permissions& user, std::string_view rule, bool allow) {
  std::string_view name = rule.substr(1);
  std::size_t bar = name.rfind('|');
  if (bar != std::string_view::npos && allow) {
    const CommandSpec* parent = find_acl_command(name.substr(0, bar));
    if (parent == nullptr) return failure(rule, kUnknownName);
    if (parent->name.find('|') != std::string_view::npos) return failure(rule, kSubcommandFirstArg);
    if (bar + 1 == name.size()) return failure(rule, kSyntax);
    if (parent->subcommands.empty()) return failure(rule, kFirstArg);
  }
  const CommandSpec* spec = find_acl_command(name);
  if (spec == nullptr) return failure(rule, kUnknownName);
  set_command(user, *spec, allow);
  return {};
}

std::string change_category(Permissions& user, std::string_view rule, bool allow) {
  std::string_view name = rule.substr(2);
  if (protocol::equals_nocase(name, "all")) {
    allow ? allow_all_commands(user) : deny_all_commands(user);
    return {};
  }
  auto category = protocol::find_category(name);
  if (!category) return failure(rule, kUnknownName);
  set_category(user, *category, allow);
  return {};
}

void reset_user(Permissions& user) {
  user.passwords.clear();
  user.nopass = false;
  user.enabled = false;
  user.all_keys = false;
  user.keys.clear();
  user.all_channels = false;  // acl-pubsub-default resetchannels
  user.channels.clear();
  deny_all_commands(user);
}

}  // namespace

Permissions new_acl_user() {
  Permissions user;
  deny_all_commands(user);
  return user;
}

Permissions unrestricted_acl_user() {
  Permissions user;
  user.enabled = true;
  allow_all_commands(user);
  user.all_keys = true;
  user.all_channels = true;
  return user;
}

std::string apply_acl_rule(Permissions& user, std::string_view rule) {
  if (rule.empty()) return failure(rule, kSyntax);
  // Redis compares the flag words case-insensitively.
  auto is = [rule](std::string_view word) { return protocol::equals_nocase(rule, word); };
  if (is("on")) {
    user.enabled = true;
  } else if (is("off")) {
    user.enabled = false;
  } else if (is("nopass")) {
    user.nopass = true;
    user.passwords.clear();
  } else if (is("resetpass")) {
    user.nopass = false;
    user.passwords.clear();
  } else if (is("reset")) {
    reset_user(user);
  } else if (is("clearselectors")) {
    // Santral's users have no selectors to clear.
  } else if (rule[0] == '(') {
    return failure(rule, kSelectors);
  } else if (rule[0] == '>') {
    add_password(user, hash_password(rule.substr(1)));
  } else if (rule[0] == '<') {
    if (!remove_password(user, hash_password(rule.substr(1))))
      return failure(rule, kNoSuchPassword);
  } else if (rule[0] == '#' || rule[0] == '!') {
    auto hash = parse_password_hash(rule.substr(1));
    if (!hash) return failure(rule, kBadHash);
    if (rule[0] == '#') {
      add_password(user, *hash);
    } else if (!remove_password(user, *hash)) {
      return failure(rule, kNoSuchPassword);
    }
  } else if (is("allkeys") || rule == "~*") {
    user.all_keys = true;
    user.keys.clear();
  } else if (is("resetkeys")) {
    user.all_keys = false;
    user.keys.clear();
  } else if (is("allchannels") || rule == "&*") {
    user.all_channels = true;
    user.channels.clear();
  } else if (is("resetchannels")) {
    user.all_channels = false;
    user.channels.clear();
  } else if (is("allcommands")) {
    allow_all_commands(user);
  } else if (is("nocommands")) {
    deny_all_commands(user);
  } else if (rule[0] == '~' || rule[0] == '%') {
    return add_key_pattern(user, rule);
  } else if (rule[0] == '&') {
    return add_channel(user, rule);
  } else if ((rule[0] == '+' || rule[0] == '-') && rule.size() > 1 && rule[1] == '@') {
    return change_category(user, rule, rule[0] == '+');
  } else if (rule[0] == '+' || rule[0] == '-') {
    return change_command(user, rule, rule[0] == '+');
  } else {
    return failure(rule, kSyntax);
  }
  return {};
}

std::string apply_acl_rules(Permissions& user, std::string_view rules) {
  std::size_t i = 0;
  while (i < rules.size()) {
    while (i < rules.size() && (rules[i] == ' ' || rules[i] == '\t')) ++i;
    std::size_t end = i;
    while (end < rules.size() && rules[end] != ' ' && rules[end] != '\t') ++end;
    if (end == i) break;
    std::string error = apply_acl_rule(user, rules.substr(i, end - i));
    if (!error.empty()) return error;
    i = end;
  }
  return {};
}

}  // namespace santral::config
