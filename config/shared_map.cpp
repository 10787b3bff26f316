#include "config/shared_map.h"

#include <array>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "config/config_error.h"

namespace santral::config {

namespace {

constexpr std::array<std::string_view, 17> kSharedKeys = {"hash",       "distribution",
                                                          "hash_tag",   "shards",
                                                          "namespaces", "salting",
                                                          "near_cache", "hotkeys",
                                                          "resharding", "users",
                                                          "password",   "databases",
                                                          "read_from",  "cross_shard_writes",
                                                          "commands",   "write_concern",
                                                          "sentinel"};

}  // namespace

std::string shared_map_text(const std::string& file_text, const std::filesystem::path& source) {
  YAML::Node root;
  try {
    root = YAML::Load(file_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, e.mark.line + 1, "", "not valid YAML: " + e.msg);
  }
  YAML::Node shared(YAML::NodeType::Map);
  if (root.IsMap())
    for (auto key : kSharedKeys)
      if (root[std::string(key)]) shared[std::string(key)] = root[std::string(key)];
  YAML::Emitter out;
  out << shared;
  return std::string(out.c_str()) + "\n";
}

void adopt_shared_map(Config& local, const Config& shared) {
  local.hash_name = shared.hash_name;
  local.hash = shared.hash;
  local.distribution = shared.distribution;
  local.hash_tag = shared.hash_tag;
  local.shards = shared.shards;
  local.namespaces = shared.namespaces;
  local.salting = shared.salting;
  local.near_cache = shared.near_cache;
  local.hotkeys = shared.hotkeys;
  local.resharding.auto_approve = shared.resharding.auto_approve;
  local.resharding.max_keys_per_sec = shared.resharding.max_keys_per_sec;
  local.resharding.max_bytes_per_sec = shared.resharding.max_bytes_per_sec;
  local.resharding.batch_keys = shared.resharding.batch_keys;
  local.resharding.batch_bytes = shared.resharding.batch_bytes;
  local.resharding.migrate_timeout = shared.resharding.migrate_timeout;
  local.users = shared.users;
  local.password = shared.password;
  local.databases = shared.databases;
  local.read_from = shared.read_from;
  local.replica_max_lag = shared.replica_max_lag;
  local.write_concern = shared.write_concern;
  local.sentinel = shared.sentinel;
  local.cross_shard_writes = shared.cross_shard_writes;
  local.commands = shared.commands;
}

}  // namespace santral::config
