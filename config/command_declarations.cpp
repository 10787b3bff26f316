#include "config/command_declarations.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "protocol/command_table.h"

namespace santral::config {
namespace {

using protocol::CommandShape;
using protocol::KeySpec;

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The keys' flags by the command's: what ACL rules check them for (ACCESS reads, UPDATE writes).
std::uint16_t key_flags(std::uint32_t flags) {
  if ((flags & protocol::kWrite) == 0 && (flags & protocol::kReadonly) != 0)
    return KeySpec::kRO | KeySpec::kAccess;
  return KeySpec::kRW | KeySpec::kAccess | KeySpec::kUpdate;
}

void read_keys(const YAML::Node& item, const YamlFields& fields, const std::string& key,
               CommandShape& shape) {
  auto position = [&](const char* name, std::int64_t min) {
    return static_cast<std::int16_t>(fields.integer(item[name], key + "." + name, min, 32767));
  };
  std::int16_t first = item["first_key"] ? position("first_key", 0) : 0;
  std::int16_t numkeys_at = item["numkeys_at"] ? position("numkeys_at", 1) : 0;
  std::int16_t step = item["key_step"] ? position("key_step", 1) : 1;
  if (first != 0 && numkeys_at != 0)
    fields.errors().at(item["numkeys_at"], key + ".numkeys_at",
                       "give first_key (keys at fixed positions) or numkeys_at (a count of keys "
                       "followed by the keys), not both");
  if (numkeys_at != 0) {
    KeySpec spec;
    spec.begin = KeySpec::Begin::Index;
    spec.index = numkeys_at;
    spec.find = KeySpec::Find::Keynum;
    spec.keynumidx = 0;
    spec.firstkey = 1;
    spec.keystep = step;
    spec.flags = key_flags(shape.flags);
    shape.key_specs.push_back({spec, ""});
    return;
  }
  if (first == 0) {
    if (item["last_key"])
      fields.errors().at(item["last_key"], key + ".last_key", "needs first_key");
    return;
  }
  std::int16_t last = item["last_key"] ? static_cast<std::int16_t>(fields.integer(
                                             item["last_key"], key + ".last_key", -32768, 32767))
                                       : first;
  if (last >= 0 && last < first)
    fields.errors().at(item["last_key"], key + ".last_key",
                       fmt::format("must be at least first_key ({}), or negative to count from "
                                   "the end (-1: the last argument)",
                                   first));
  KeySpec spec;
  spec.begin = KeySpec::Begin::Index;
  spec.index = first;
  spec.find = KeySpec::Find::Range;
  spec.lastkey = static_cast<std::int16_t>(last < 0 ? last : last - first);
  spec.keystep = step;
  spec.flags = key_flags(shape.flags);
  shape.key_specs.push_back({spec, ""});
}

}  // namespace

void read_commands(const YAML::Node& node, const YamlFields& fields, Config& config) {
  if (!node.IsSequence())
    fields.errors().at(node, "commands",
                       "expected a list of commands, each with a name and where its keys are");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    std::string key = fmt::format("commands[{}]", i);
    static constexpr std::string_view kKeys[] = {"name",     "arity",    "flags",     "first_key",
                                                 "last_key", "key_step", "numkeys_at"};
    fields.only_keys(item, key, kKeys);
    if (!item["name"]) fields.errors().at(item, key + ".name", "every command needs a name");
    CommandShape shape;
    shape.name = lower(fields.string(item["name"], key + ".name"));
    if (shape.name.empty() || shape.name.find_first_of(" |\t") != std::string::npos)
      fields.errors().at(item["name"], key + ".name",
                         "expected a command name without spaces or '|'");
    if (protocol::find_command(shape.name) != nullptr)
      fields.errors().at(item["name"], key + ".name",
                         fmt::format("'{}' is a command Santral knows already; commands: declares "
                                     "the ones it does not (a module's, your own)",
                                     shape.name));
    for (const auto& other : config.commands)
      if (other.name == shape.name)
        fields.errors().at(item["name"], key + ".name",
                           fmt::format("'{}' is declared twice", shape.name));
    if (item["arity"]) {
      shape.arity =
          static_cast<std::int32_t>(fields.integer(item["arity"], key + ".arity", -1000, 1000));
      if (shape.arity == 0)
        fields.errors().at(item["arity"], key + ".arity",
                           "expected N (exactly N arguments with the name) or -N (at least N)");
    }
    if (item["flags"]) {
      const YAML::Node& flags = item["flags"];
      if (!flags.IsSequence())
        fields.errors().at(flags, key + ".flags", "expected a list such as [readonly] or [write]");
      for (std::size_t f = 0; f < flags.size(); ++f) {
        std::string flag = lower(fields.string(flags[f], fmt::format("{}.flags[{}]", key, f)));
        auto bit = protocol::command_flag_named(flag);
        if (bit == 0)
          fields.errors().at(flags[f], fmt::format("{}.flags[{}]", key, f),
                             fmt::format("unknown flag '{}'; expected readonly, write, denyoom, "
                                         "admin, pubsub, noscript, blocking, loading, stale, fast, "
                                         "no_multi, movablekeys or no_mandatory_keys",
                                         flag));
        shape.flags |= bit;
      }
    }
    if ((shape.flags & protocol::kReadonly) && (shape.flags & protocol::kWrite))
      fields.errors().at(item["flags"], key + ".flags", "readonly and write exclude each other");
    read_keys(item, fields, key, shape);
    shape.categories = protocol::categories_of_flags(shape.flags);
    config.commands.push_back(std::move(shape));
  }
}

}  // namespace santral::config
