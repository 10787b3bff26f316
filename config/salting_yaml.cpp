#include "config/salting_yaml.h"

#include <fmt/format.h>

namespace santral::config {

const char* salt_reply_name(SaltReply reply) {
  return reply == SaltReply::Exact ? "exact" : "estimate";
}

namespace {

SaltReply read_reply(const YAML::Node& node, const YamlFields& fields, const std::string& key) {
  std::string reply = fields.string(node, key);
  if (reply == "exact") return SaltReply::Exact;
  if (reply != "estimate")
    fields.errors().at(node, key, "expected estimate or exact, got '" + reply + "'");
  return SaltReply::Estimate;
}

std::uint32_t read_count(const YAML::Node& node, const YamlFields& fields, const std::string& key,
                         std::int64_t min, std::int64_t max) {
  return static_cast<std::uint32_t>(fields.integer(node, key, min, max));
}

void read_auto_salt(const YAML::Node& node, const YamlFields& fields, AutoSaltSettings& out) {
  static constexpr std::string_view kKeys[] = {
      "enabled", "writes_per_sec",      "for_s",      "salts",
      "reply",   "cold_writes_per_sec", "cold_for_s", "check_ms"};
  const std::string path = "hotkeys.auto_salt";
  fields.only_keys(node, path, kKeys);
  if (node["enabled"]) out.enabled = fields.boolean(node["enabled"], path + ".enabled");
  if (node["writes_per_sec"])
    out.writes_per_sec =
        read_count(node["writes_per_sec"], fields, path + ".writes_per_sec", 1, 1'000'000'000);
  if (node["for_s"]) out.for_s = read_count(node["for_s"], fields, path + ".for_s", 0, 86'400);
  if (node["salts"])
    out.salts = read_count(node["salts"], fields, path + ".salts", kMinSalts, kMaxSalts);
  if (node["reply"]) out.reply = read_reply(node["reply"], fields, path + ".reply");
  if (node["cold_writes_per_sec"])
    out.cold_writes_per_sec = read_count(node["cold_writes_per_sec"], fields,
                                         path + ".cold_writes_per_sec", 0, 1'000'000'000);
  if (node["cold_for_s"])
    out.cold_for_s = read_count(node["cold_for_s"], fields, path + ".cold_for_s", 0, 86'400);
  if (node["check_ms"])
    out.check_ms = read_count(node["check_ms"], fields, path + ".check_ms", 10, 60'000);
  if (out.cold_writes_per_sec >= out.writes_per_sec) {
    const YAML::Node& at = node["cold_writes_per_sec"] ? node["cold_writes_per_sec"] : node;
    fields.errors().at(at, path + ".cold_writes_per_sec",
                       fmt::format("must be below writes_per_sec ({}), or a key would be salted "
                                   "and unsalted over and over",
                                   out.writes_per_sec));
  }
}

SaltRule read_rule(const YAML::Node& item, const YamlFields& fields, const std::string& key) {
  static constexpr std::string_view kKeys[] = {"key", "match", "salts", "reply"};
  fields.only_keys(item, key, kKeys);
  const auto& errors = fields.errors();
  if (static_cast<bool>(item["key"]) == static_cast<bool>(item["match"]))
    errors.at(item, key,
              "give either `key:` (one counter) or `match:` (a pattern such as likes:{post}), "
              "not both");
  if (!item["salts"])
    errors.at(item, key + ".salts",
              fmt::format("missing: how many sub-keys to spread the counter over ({}..{})",
                          kMinSalts, kMaxSalts));
  SaltRule rule;
  if (item["key"]) {
    rule.key = fields.string(item["key"], key + ".key");
    if (rule.key.empty()) errors.at(item["key"], key + ".key", "must not be empty");
  } else {
    std::string text = fields.string(item["match"], key + ".match");
    std::string problem;
    rule.pattern = KeyPattern::compile(text, problem);
    if (!rule.pattern) errors.at(item["match"], key + ".match", problem);
  }
  rule.salts = static_cast<std::uint32_t>(
      fields.integer(item["salts"], key + ".salts", kMinSalts, kMaxSalts));
  if (item["reply"]) rule.reply = read_reply(item["reply"], fields, key + ".reply");
  return rule;
}

}  // namespace

void read_hotkeys(const YAML::Node& node, const YamlFields& fields, HotKeySettings& out) {
  static constexpr std::string_view kKeys[] = {"enabled",  "sample_every", "capacity",
                                               "window_s", "auto_salt",    "state_file"};
  fields.only_keys(node, "hotkeys", kKeys);
  if (node["enabled"]) out.enabled = fields.boolean(node["enabled"], "hotkeys.enabled");
  if (node["sample_every"])
    out.sample_every =
        read_count(node["sample_every"], fields, "hotkeys.sample_every", 1, 1'000'000);
  if (node["capacity"])
    out.capacity = read_count(node["capacity"], fields, "hotkeys.capacity", 1, 100'000);
  if (node["window_s"])
    out.window_s = read_count(node["window_s"], fields, "hotkeys.window_s", 1, 3600);
  if (node["state_file"]) out.state_file = fields.string(node["state_file"], "hotkeys.state_file");
  if (node["auto_salt"]) {
    read_auto_salt(node["auto_salt"], fields, out.auto_salt);
    if (out.auto_salt.enabled && !out.enabled)
      fields.errors().at(node["auto_salt"], "hotkeys.auto_salt.enabled",
                         "automatic salting needs hot-key detection, but hotkeys.enabled is "
                         "false");
  }
}

void read_salting(const YAML::Node& node, const YamlFields& fields, Config& config) {
  if (!node.IsSequence())
    fields.errors().at(node, "salting",
                       "expected a list of salted counters, each with `key:` or `match:` and "
                       "`salts:`");
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string key = fmt::format("salting[{}]", i);
    SaltRule rule = read_rule(node[i], fields, key);
    for (const auto& other : config.salting) {
      bool same = rule.pattern ? other.pattern && other.pattern->text() == rule.pattern->text()
                               : !other.pattern && other.key == rule.key;
      if (same)
        fields.errors().at(
            node[i], key,
            "'" + (rule.pattern ? rule.pattern->text() : rule.key) + "' is salted twice");
    }
    config.salting.push_back(std::move(rule));
  }
}

}  // namespace santral::config
