#include "config/salting_yaml.h"

#include <fmt/format.h>

namespace santral::config {

const char* salt_reply_name(SaltReply reply) {
  return reply == SaltReply::Exact ? "exact" : "estimate";
}

void read_hotkeys(const YAML::Node& node, const YamlFields& fields, HotKeySettings& out) {
  static constexpr std::string_view kKeys[] = {"enabled", "sample_every", "capacity", "window_s"};
  fields.only_keys(node, "hotkeys", kKeys);
  if (node["enabled"]) out.enabled = fields.boolean(node["enabled"], "hotkeys.enabled");
  if (node["sample_every"])
    out.sample_every = static_cast<std::uint32_t>(
        fields.integer(node["sample_every"], "hotkeys.sample_every", 1, 1'000'000));
  if (node["capacity"])
    out.capacity = static_cast<std::uint32_t>(
        fields.integer(node["capacity"], "hotkeys.capacity", 1, 100'000));
  if (node["window_s"])
    out.window_s =
        static_cast<std::uint32_t>(fields.integer(node["window_s"], "hotkeys.window_s", 1, 3600));
}

namespace {

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
  if (item["reply"]) {
    std::string reply = fields.string(item["reply"], key + ".reply");
    if (reply == "exact")
      rule.reply = SaltReply::Exact;
    else if (reply != "estimate")
      errors.at(item["reply"], key + ".reply", "expected estimate or exact, got '" + reply + "'");
  }
  return rule;
}

}  // namespace

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
