#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/config_error.h"

namespace santral::config {

// Typed reads of YAML fields that fail with the file, line and key of the offending value.
// `key` is the dotted path shown to the operator ("timeouts.request_ms", "shards[2].address").
class YamlFields {
 public:
  explicit YamlFields(const ConfigErrors& errors) : errors_(errors) {}

  // Fails on any key of `map` that is not in `allowed`, naming the allowed ones.
  void only_keys(const YAML::Node& map, const std::string& path,
                 std::span<const std::string_view> allowed) const;

  std::string string(const YAML::Node& node, const std::string& key) const;
  std::int64_t integer(const YAML::Node& node, const std::string& key, std::int64_t min,
                       std::int64_t max) const;
  bool boolean(const YAML::Node& node, const std::string& key) const;
  // primary, prefer-replica or replica.
  ReadFrom read_from(const YAML::Node& node, const std::string& key) const;
  // A size in bytes: a number, or a number with a k/kb/m/mb/g/gb suffix as in redis.conf.
  std::uint64_t bytes(const YAML::Node& node, const std::string& key) const;
  std::chrono::milliseconds millis(const YAML::Node& node, const std::string& key) const;
  Endpoint endpoint(const YAML::Node& node, const std::string& key) const;
  hashkit::HashFunction hash(const YAML::Node& node, const std::string& key) const;
  Distribution distribution(const YAML::Node& node, const std::string& key) const;
  std::string hash_tag(const YAML::Node& node, const std::string& key) const;

  const ConfigErrors& errors() const { return errors_; }

 private:
  const ConfigErrors& errors_;
};

// Checks what both config formats must satisfy (names and addresses unique, at least one
// shard, weights positive); `shard_nodes[i]` is where shard i was written.
void validate_shards(const Config& config, const std::vector<YAML::Node>& shard_nodes,
                     const std::string& list_key, const ConfigErrors& errors);

}  // namespace santral::config
