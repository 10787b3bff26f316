#include "protocol/command_table.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "protocol/command_table_data.h"

namespace santral::protocol {
namespace {

constexpr std::size_t kLongestName = 32;

// Lower-cases `name` into `buffer`; false if it is longer than any command name.
bool lower(std::string_view name, char (&buffer)[kLongestName], std::string_view& out) {
  if (name.size() > kLongestName) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    buffer[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  out = std::string_view(buffer, name.size());
  return true;
}

const std::unordered_map<std::string_view, const CommandSpec*>& index() {
  static const auto* table = [] {
    auto* map = new std::unordered_map<std::string_view, const CommandSpec*>();
    for (const CommandSpec& spec : generated_commands()) map->emplace(spec.name, &spec);
    return map;
  }();
  return *table;
}

#ifdef SANTRAL_TEST_HOOKS
// A test build only (SANTRAL_TEST_HOOKS): SANTRAL_TEST_HIDE_COMMANDS=getex,object|freq,...
// takes commands out of the built-in table, so that tests see them learned from the shards.
bool hidden(std::string_view name) {
  static const auto* names = [] {
    auto* set = new std::unordered_set<std::string>();
    const char* text = std::getenv("SANTRAL_TEST_HIDE_COMMANDS");
    std::string_view rest = text == nullptr ? "" : text;
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string one(rest.substr(0, comma));
      if (!one.empty()) set->insert(one);
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    }
    return set;
  }();
  return !names->empty() && names->contains(std::string(name));
}
#else
constexpr bool hidden(std::string_view) {
  return false;
}
#endif

}  // namespace

std::string upper_name(const CommandSpec& spec) {
  std::string name(spec.name);
  for (auto& c : name)
    c = c == '|' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

const CommandSpec* find_command(std::string_view name) {
  char buffer[kLongestName];
  std::string_view key;
  if (!lower(name, buffer, key)) return nullptr;
  const auto& table = index();
  auto it = table.find(key);
  return it == table.end() || hidden(key) ? nullptr : it->second;
}

const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view sub) {
  char buffer[kLongestName];
  std::string_view key;
  if (!lower(sub, buffer, key)) return nullptr;
  // Subcommand names are "container|sub", sorted.
  for (const CommandSpec& spec : container.subcommands) {
    std::string_view name = spec.name.substr(container.name.size() + 1);
    if (name == key) return hidden(spec.name) ? nullptr : &spec;
  }
  return nullptr;
}

std::span<const CommandSpec> all_commands() {
  return generated_commands();
}

std::size_t command_id_count() {
  return generated_command_ids();
}

}  // namespace santral::protocol
