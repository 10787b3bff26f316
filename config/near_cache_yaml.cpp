#include "config/near_cache_yaml.h"

namespace santral::config {

namespace {

// Below this a bound cannot hold a useful value; the largest value cached is 1/8 of it.
constexpr std::uint64_t kMinBytes = 64 * 1024;

}  // namespace

void read_near_cache(const YAML::Node& node, const YamlFields& fields, NearCacheSettings& out) {
  static constexpr std::string_view kKeys[] = {"enabled", "max_bytes", "min_reads_per_sec"};
  if (!node.IsMap())
    fields.errors().at(node, "near_cache",
                       "expected a map with enabled, max_bytes and min_reads_per_sec");
  fields.only_keys(node, "near_cache", kKeys);
  if (node["enabled"]) out.enabled = fields.boolean(node["enabled"], "near_cache.enabled");
  if (node["max_bytes"]) {
    out.max_bytes = fields.bytes(node["max_bytes"], "near_cache.max_bytes");
    if (out.max_bytes < kMinBytes)
      fields.errors().at(node["max_bytes"], "near_cache.max_bytes",
                         "must be at least 64kb (the bound is per worker)");
  }
  if (node["min_reads_per_sec"])
    out.min_reads_per_sec = static_cast<std::uint32_t>(
        fields.integer(node["min_reads_per_sec"], "near_cache.min_reads_per_sec", 1, 100'000'000));
}

void check_near_cache(const YAML::Node& root, const Config& config, const ConfigErrors& errors) {
  if (config.hotkeys.enabled) return;
  if (config.near_cache.enabled)
    errors.at(root["near_cache"]["enabled"], "near_cache.enabled",
              "needs hot-key detection, which decides what is cached: remove "
              "`hotkeys: {enabled: false}` or turn the near cache off");
  for (std::size_t i = 0; i < config.namespaces.size(); ++i)
    if (config.namespaces[i].near_cache.value_or(false))
      errors.at(root["namespaces"][i]["near_cache"],
                "namespaces[" + std::to_string(i) + "].near_cache",
                "needs hot-key detection, which decides what is cached: remove "
                "`hotkeys: {enabled: false}` or turn the near cache off");
}

}  // namespace santral::config
