#include "config/yaml_fields.h"

#include <charconv>
#include <map>

#include <fmt/format.h>

namespace santral::config {
namespace {

std::string join(std::span<const std::string_view> words) {
  std::string out;
  for (auto word : words) {
    if (!out.empty()) out += ", ";
    out += word;
  }
  return out;
}

bool to_int(std::string_view text, std::int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::string Endpoint::text() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

bool parse_endpoint(std::string_view text, Endpoint& out) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return false;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return false;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return false;  // IPv6 needs brackets
  }
  std::int64_t number = 0;
  if (host.empty() || !to_int(port, number) || number < 1 || number > 65535) return false;
  out.host = std::string(host);
  out.port = static_cast<std::uint16_t>(number);
  return true;
}

void YamlFields::only_keys(const YAML::Node& map, const std::string& path,
                           std::span<const std::string_view> allowed) const {
  if (!map.IsMap()) errors_.at(map, path, "expected a mapping of keys to values");
  for (const auto& item : map) {
    auto name = item.first.as<std::string>();
    bool known = false;
    for (auto a : allowed) known = known || a == name;
    if (!known) {
      std::string key = path.empty() ? name : fmt::format("{}.{}", path, name);
      errors_.at(item.first, key, "unknown key (expected one of: " + join(allowed) + ")");
    }
  }
}

std::string YamlFields::string(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) errors_.at(node, key, "expected a single value (a string)");
  return node.Scalar();
}

std::int64_t YamlFields::integer(const YAML::Node& node, const std::string& key, std::int64_t min,
                                 std::int64_t max) const {
  std::int64_t value = 0;
  if (!node.IsScalar() || !to_int(node.Scalar(), value))
    errors_.at(node, key, fmt::format("expected a whole number from {} to {}", min, max));
  if (value < min || value > max)
    errors_.at(node, key, fmt::format("{} is out of range: expected {} to {}", value, min, max));
  return value;
}

bool YamlFields::boolean(const YAML::Node& node, const std::string& key) const {
  std::string text = node.IsScalar() ? node.Scalar() : "";
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  errors_.at(node, key, "expected true or false");
}

ReadFrom YamlFields::read_from(const YAML::Node& node, const std::string& key) const {
  std::string text = string(node, key);
  if (text == "primary") return ReadFrom::Primary;
  if (text == "prefer-replica") return ReadFrom::PreferReplica;
  if (text == "replica") return ReadFrom::Replica;
  errors_.at(node, key, "expected primary, prefer-replica or replica, got '" + text + "'");
}

std::uint64_t YamlFields::bytes(const YAML::Node& node, const std::string& key) const {
  static const std::map<std::string, std::uint64_t> units = {{"", 1},
                                                             {"b", 1},
                                                             {"k", 1000},
                                                             {"kb", 1024},
                                                             {"m", 1000 * 1000},
                                                             {"mb", 1024 * 1024},
                                                             {"g", 1000000000},
                                                             {"gb", 1024ull * 1024 * 1024}};
  std::string text = node.IsScalar() ? node.Scalar() : "";
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::int64_t number = 0;
  auto it = units.find(unit);
  if (digits == 0 || it == units.end() || !to_int(std::string_view(text).substr(0, digits), number))
    errors_.at(node, key, "expected a size in bytes, like 65536, 64kb or 512mb");
  return static_cast<std::uint64_t>(number) * it->second;
}

std::chrono::milliseconds YamlFields::millis(const YAML::Node& node, const std::string& key) const {
  return std::chrono::milliseconds(integer(node, key, 1, 24ll * 3600 * 1000));
}

Endpoint YamlFields::endpoint(const YAML::Node& node, const std::string& key) const {
  Endpoint out;
  std::string text = string(node, key);
  if (!parse_endpoint(text, out))
    errors_.at(node, key,
               "expected host:port (for example 127.0.0.1:6379 or [::1]:6379), got '" + text + "'");
  return out;
}

hashkit::HashFunction YamlFields::hash(const YAML::Node& node, const std::string& key) const {
  std::string name = string(node, key);
  if (auto fn = hashkit::hash_function_named(name)) return *fn;
  std::string names;
  for (auto n : hashkit::hash_function_names())
    names += (names.empty() ? "" : ", ") + std::string(n);
  errors_.at(node, key, "unknown hash function '" + name + "' (expected one of: " + names + ")");
}

Distribution YamlFields::distribution(const YAML::Node& node, const std::string& key) const {
  std::string name = string(node, key);
  if (name == "ketama") return Distribution::Ketama;
  if (name == "modula") return Distribution::Modula;
  if (name == "random") return Distribution::Random;
  errors_.at(node, key, "unknown distribution '" + name + "' (expected ketama, modula or random)");
}

std::string YamlFields::hash_tag(const YAML::Node& node, const std::string& key) const {
  std::string tag = string(node, key);
  if (!tag.empty() && tag.size() != 2)
    errors_.at(node, key,
               "expected two characters, the tag's start and end (like \"{}\"), or \"\"");
  return tag;
}

void validate_shards(const Config& config, const std::vector<YAML::Node>& shard_nodes,
                     const std::string& list_key, const ConfigErrors& errors) {
  std::map<std::string, std::size_t> names;
  std::map<std::string, std::size_t> addresses;
  for (std::size_t i = 0; i < config.shards.size(); ++i) {
    const auto& shard = config.shards[i];
    std::string key = fmt::format("{}[{}]", list_key, i);
    if (auto [it, fresh] = names.emplace(shard.name, i); !fresh)
      errors.at(shard_nodes[i], key,
                fmt::format("shard name '{}' is already used by {}[{}]; names must be unique",
                            shard.name, list_key, it->second));
    if (auto [it, fresh] = addresses.emplace(shard.address.text(), i); !fresh)
      errors.at(shard_nodes[i], key,
                fmt::format("address {} is already used by {}[{}]; each shard is its own server",
                            shard.address.text(), list_key, it->second));
    for (const auto& replica : shard.replicas)
      if (auto [it, fresh] = addresses.emplace(replica.text(), i); !fresh)
        errors.at(shard_nodes[i], key + ".replicas",
                  fmt::format("address {} is already used by {}[{}]; a replica is its own server",
                              replica.text(), list_key, it->second));
  }
}

}  // namespace santral::config
