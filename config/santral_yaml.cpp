#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "config/acl/users_yaml.h"
#include "config/audit_yaml.h"
#include "config/cluster_yaml.h"
#include "config/command_declarations.h"
#include "config/loaders.h"
#include "config/namespace/namespace_yaml.h"
#include "config/near_cache_yaml.h"
#include "config/resharding_yaml.h"
#include "config/salting_yaml.h"
#include "config/sentinel_yaml.h"
#include "config/slowlog_yaml.h"
#include "config/tenant_limits_yaml.h"
#include "config/tls_yaml.h"
#include "config/write_concern_yaml.h"
#include "config/yaml_fields.h"

namespace santral::config {
namespace {

void read_timeouts(const YAML::Node& node, const YamlFields& fields, Timeouts& out) {
  static constexpr std::string_view kKeys[] = {"connect_ms", "request_ms", "reconnect_min_ms",
                                               "reconnect_max_ms", "script_ms"};
  fields.only_keys(node, "timeouts", kKeys);
  if (node["connect_ms"]) out.connect = fields.millis(node["connect_ms"], "timeouts.connect_ms");
  if (node["request_ms"]) out.request = fields.millis(node["request_ms"], "timeouts.request_ms");
  if (node["script_ms"]) out.script = fields.millis(node["script_ms"], "timeouts.script_ms");
  if (node["reconnect_min_ms"])
    out.reconnect_min = fields.millis(node["reconnect_min_ms"], "timeouts.reconnect_min_ms");
  if (node["reconnect_max_ms"])
    out.reconnect_max = fields.millis(node["reconnect_max_ms"], "timeouts.reconnect_max_ms");
  if (out.reconnect_max < out.reconnect_min)
    fields.errors().at(node["reconnect_max_ms"] ? node["reconnect_max_ms"] : node,
                       "timeouts.reconnect_max_ms",
                       "must not be smaller than timeouts.reconnect_min_ms");
}

void read_backend(const YAML::Node& node, const YamlFields& fields, BackendOptions& out) {
  static constexpr std::string_view kKeys[] = {"connections_per_shard", "username", "password",
                                               "database", "tls"};
  fields.only_keys(node, "backend", kKeys);
  if (node["connections_per_shard"])
    out.connections_per_shard = static_cast<std::uint32_t>(
        fields.integer(node["connections_per_shard"], "backend.connections_per_shard", 1, 64));
  if (node["username"]) out.username = fields.string(node["username"], "backend.username");
  if (node["password"]) out.password = fields.string(node["password"], "backend.password");
  if (node["database"])
    out.database = static_cast<int>(fields.integer(node["database"], "backend.database", 0, 65535));
  if (node["tls"]) read_tls_client(node["tls"], fields, out.tls);
  if (!out.username.empty() && out.password.empty())
    fields.errors().at(node["username"], "backend.username",
                       "a username needs a password (backend.password)");
}

void read_limits(const YAML::Node& node, const YamlFields& fields, ClientLimits& out) {
  static constexpr std::string_view kKeys[] = {"max_clients",
                                               "max_args",
                                               "max_bulk_bytes",
                                               "max_inline_bytes",
                                               "max_pending_requests",
                                               "max_output_bytes",
                                               "tracking_table_max_keys",
                                               "max_merge_bytes",
                                               "idle_timeout_s",
                                               "auth_timeout_ms",
                                               "max_query_buffer_bytes",
                                               "max_input_bytes_total"};
  fields.only_keys(node, "limits", kKeys);
  if (node["max_clients"])
    out.max_clients = static_cast<std::size_t>(
        fields.integer(node["max_clients"], "limits.max_clients", 1, 10'000'000));
  if (node["max_args"])
    out.request.max_args = static_cast<std::size_t>(
        fields.integer(node["max_args"], "limits.max_args", 1, 2147483647));
  if (node["max_bulk_bytes"])
    out.request.max_bulk_bytes = fields.bytes(node["max_bulk_bytes"], "limits.max_bulk_bytes");
  if (node["max_inline_bytes"])
    out.request.max_inline_bytes =
        fields.bytes(node["max_inline_bytes"], "limits.max_inline_bytes");
  if (node["max_pending_requests"])
    out.max_pending_requests = static_cast<std::size_t>(
        fields.integer(node["max_pending_requests"], "limits.max_pending_requests", 1, 1'000'000));
  if (node["max_output_bytes"])
    out.max_output_bytes = fields.bytes(node["max_output_bytes"], "limits.max_output_bytes");
  if (node["tracking_table_max_keys"])
    out.tracking_table_max_keys = static_cast<std::size_t>(fields.integer(
        node["tracking_table_max_keys"], "limits.tracking_table_max_keys", 1, 1'000'000'000));
  if (node["max_merge_bytes"])
    out.max_merge_bytes = fields.bytes(node["max_merge_bytes"], "limits.max_merge_bytes");
  if (node["idle_timeout_s"])
    out.idle_timeout = std::chrono::seconds(
        fields.integer(node["idle_timeout_s"], "limits.idle_timeout_s", 0, 100'000'000));
  if (node["auth_timeout_ms"])
    out.auth_timeout = std::chrono::milliseconds(
        fields.integer(node["auth_timeout_ms"], "limits.auth_timeout_ms", 0, 86'400'000));
  if (node["max_query_buffer_bytes"])
    out.max_query_buffer_bytes =
        fields.bytes(node["max_query_buffer_bytes"], "limits.max_query_buffer_bytes");
  if (node["max_input_bytes_total"])
    out.max_input_bytes_total =
        fields.bytes(node["max_input_bytes_total"], "limits.max_input_bytes_total");
  if (out.max_query_buffer_bytes < 1024 * 1024)
    fields.errors().at(node["max_query_buffer_bytes"], "limits.max_query_buffer_bytes",
                       "must be at least 1mb (Redis's own minimum for client-query-buffer-limit)");
  if (out.request.max_inline_bytes < 64)
    fields.errors().at(node["max_inline_bytes"], "limits.max_inline_bytes",
                       "must be at least 64 bytes");
}

void read_users(const YAML::Node& node, const YamlFields& fields, Config& config) {
  if (!node.IsSequence())
    fields.errors().at(node, "users", "expected a list of users, each with a name and a password");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    std::string key = fmt::format("users[{}]", i);
    User user{read_user_name(item, fields, key), nullptr, {}};
    for (const auto& other : config.users)
      if (other.name == user.name)
        fields.errors().at(item["name"], key + ".name", "user '" + user.name + "' is listed twice");
    user.permissions =
        std::make_shared<const Permissions>(read_user_permissions(item, fields, key));
    if (item["limits"]) user.limits = read_tenant_limits(item["limits"], fields, key + ".limits");
    config.users.push_back(std::move(user));
  }
}

void read_health(const YAML::Node& node, const YamlFields& fields, Health& out) {
  static constexpr std::string_view kKeys[] = {"interval_ms", "failures"};
  fields.only_keys(node, "health", kKeys);
  if (node["interval_ms"]) out.interval = fields.millis(node["interval_ms"], "health.interval_ms");
  if (node["failures"])
    out.failures =
        static_cast<std::uint32_t>(fields.integer(node["failures"], "health.failures", 1, 1000));
}

// `read_from: prefer-replica`, or `read_from: {mode: prefer-replica, max_lag_ms: 500}`.
void read_read_from(const YAML::Node& node, const YamlFields& fields, Config& config) {
  if (!node.IsMap()) {
    config.read_from = fields.read_from(node, "read_from");
    return;
  }
  static constexpr std::string_view kKeys[] = {"mode", "max_lag_ms"};
  fields.only_keys(node, "read_from", kKeys);
  if (node["mode"]) config.read_from = fields.read_from(node["mode"], "read_from.mode");
  if (node["max_lag_ms"])
    config.replica_max_lag = fields.millis(node["max_lag_ms"], "read_from.max_lag_ms");
}

void read_shutdown(const YAML::Node& node, const YamlFields& fields, ShutdownSettings& out) {
  static constexpr std::string_view kKeys[] = {"ready_delay_ms"};
  if (!node.IsMap()) fields.errors().at(node, "shutdown", "expected a map: {ready_delay_ms: 0}");
  fields.only_keys(node, "shutdown", kKeys);
  if (node["ready_delay_ms"])
    out.ready_delay = std::chrono::milliseconds(
        fields.integer(node["ready_delay_ms"], "shutdown.ready_delay_ms", 0, 600'000));
}

void read_admin(const YAML::Node& node, const YamlFields& fields, Admin& out) {
  static constexpr std::string_view kKeys[] = {"listen", "token", "tls",
                                               "allow_remote_without_token"};
  fields.only_keys(node, "admin", kKeys);
  if (node["listen"]) out.listen = fields.endpoint(node["listen"], "admin.listen");
  if (node["token"]) out.token = fields.string(node["token"], "admin.token");
  if (node["tls"]) out.tls = fields.boolean(node["tls"], "admin.tls");
  if (node["allow_remote_without_token"])
    out.allow_remote_without_token =
        fields.boolean(node["allow_remote_without_token"], "admin.allow_remote_without_token");
  if (auto refused = admin_exposure_error(out))
    fields.errors().at(node["listen"] ? node["listen"] : node, "admin.listen", *refused);
}

std::vector<YAML::Node> read_shards(const YAML::Node& node, const YamlFields& fields,
                                    Config& config) {
  if (!node.IsSequence() || node.size() == 0)
    fields.errors().at(node, "shards",
                       "expected a list of shards, each with a name and an address");
  std::vector<YAML::Node> nodes;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    std::string key = fmt::format("shards[{}]", i);
    static constexpr std::string_view kKeys[] = {"name",     "address", "weight",
                                                 "replicas", "tls",     "sentinel_master"};
    fields.only_keys(item, key, kKeys);
    if (!item["name"]) fields.errors().at(item, key + ".name", "every shard needs a name");
    if (!item["address"] && !item["sentinel_master"])
      fields.errors().at(item, key + ".address",
                         "every shard needs an address (host:port), or a sentinel_master whose "
                         "primary Sentinel names");
    ShardConfig shard;
    shard.line = item.Mark().line + 1;
    shard.name = fields.string(item["name"], key + ".name");
    if (shard.name.empty()) fields.errors().at(item["name"], key + ".name", "must not be empty");
    if (item["sentinel_master"]) {
      if (item["address"] || item["replicas"])
        fields.errors().at(item["sentinel_master"], key + ".sentinel_master",
                           "Sentinel names this shard's primary and replicas: leave out address "
                           "and replicas");
      if (!config.sentinel.enabled())
        fields.errors().at(item["sentinel_master"], key + ".sentinel_master",
                           "no sentinel: list the sentinels to ask (sentinel: {addresses: "
                           "[host:port, ...]}) before the shards");
      shard.sentinel_master = fields.string(item["sentinel_master"], key + ".sentinel_master");
      // Unique until Sentinel is asked (router/backend/sentinel_lookup.h).
      shard.address = Endpoint{"sentinel:" + shard.sentinel_master, 0};
    } else {
      shard.address = fields.endpoint(item["address"], key + ".address");
    }
    if (item["weight"])
      shard.weight =
          static_cast<std::uint32_t>(fields.integer(item["weight"], key + ".weight", 1, 10000));
    if (item["replicas"]) {
      const YAML::Node& replicas = item["replicas"];
      if (!replicas.IsSequence())
        fields.errors().at(replicas, key + ".replicas", "expected a list of host:port addresses");
      for (std::size_t r = 0; r < replicas.size(); ++r)
        shard.replicas.push_back(
            fields.endpoint(replicas[r], fmt::format("{}.replicas[{}]", key, r)));
    }
    if (item["tls"]) shard.tls = fields.boolean(item["tls"], key + ".tls");
    shard.ring_name = shard.name;
    config.shards.push_back(std::move(shard));
    nodes.push_back(item);
  }
  return nodes;
}

}  // namespace

Config read_santral_yaml(const YAML::Node& root, const ConfigErrors& errors) {
  YamlFields fields(errors);
  static constexpr std::string_view kKeys[] = {"listen",       "workers",    "hash",
                                               "distribution", "hash_tag",   "timeouts",
                                               "backend",      "limits",     "shards",
                                               "password",     "users",      "databases",
                                               "log_level",    "read_from",  "health",
                                               "admin",        "watch_file", "drain_ms",
                                               "namespaces",   "hotkeys",    "salting",
                                               "near_cache",   "resharding", "cross_shard_writes",
                                               "tls",          "cluster",    "cluster_endpoint",
                                               "announce",     "commands",   "write_concern",
                                               "sentinel",     "failover",   "shutdown",
                                               "audit",        "slowlog"};
  fields.only_keys(root, "", kKeys);
  Config config;
  config.format = ConfigFormat::Santral;
  config.hash_tag = "{}";
  // Not twemproxy's fnv1a_64: under ketama it puts keys that differ only in their last
  // characters (user1, user2, ...) on the same shard.
  config.hash_name = "murmur";
  config.hash = hashkit::hash_function_named(config.hash_name).value();
  if (root["listen"]) config.listen = fields.endpoint(root["listen"], "listen");
  if (root["workers"])
    config.workers = static_cast<unsigned>(fields.integer(root["workers"], "workers", 0, 1024));
  if (root["hash"]) {
    config.hash = fields.hash(root["hash"], "hash");
    config.hash_name = root["hash"].Scalar();
  }
  if (root["distribution"])
    config.distribution = fields.distribution(root["distribution"], "distribution");
  if (root["hash_tag"]) config.hash_tag = fields.hash_tag(root["hash_tag"], "hash_tag");
  if (root["timeouts"]) read_timeouts(root["timeouts"], fields, config.timeouts);
  if (root["backend"]) read_backend(root["backend"], fields, config.backend);
  if (root["limits"]) read_limits(root["limits"], fields, config.limits);
  if (root["password"]) config.password = fields.string(root["password"], "password");
  if (root["users"]) read_users(root["users"], fields, config);
  if (root["databases"])
    config.databases = static_cast<int>(fields.integer(root["databases"], "databases", 1, 65536));
  if (root["read_from"]) read_read_from(root["read_from"], fields, config);
  if (root["write_concern"])
    read_write_concern(root["write_concern"], fields, "write_concern", config.write_concern);
  if (root["sentinel"]) read_sentinel(root["sentinel"], fields, config.sentinel);
  if (root["failover"]) read_failover(root["failover"], fields, config.failover);
  if (root["health"]) read_health(root["health"], fields, config.health);
  if (root["admin"]) read_admin(root["admin"], fields, config.admin);
  if (root["tls"]) read_tls_server(root["tls"], fields, config.tls);
  check_tls(root, config, errors);
  if (root["watch_file"]) config.watch_file = fields.boolean(root["watch_file"], "watch_file");
  if (root["drain_ms"]) config.drain = fields.millis(root["drain_ms"], "drain_ms");
  if (root["shutdown"]) read_shutdown(root["shutdown"], fields, config.shutdown);
  if (root["audit"]) read_audit(root["audit"], fields, config.audit);
  if (root["slowlog"]) read_slowlog(root["slowlog"], fields, config.slowlog);
  if (root["cross_shard_writes"]) {
    std::string mode = fields.string(root["cross_shard_writes"], "cross_shard_writes");
    if (mode != "refuse" && mode != "allow")
      errors.at(root["cross_shard_writes"], "cross_shard_writes",
                "expected refuse (the default: CROSSSLOT) or allow (run them as a read, a write "
                "and a delete, not atomically)");
    config.cross_shard_writes = mode == "allow";
  }
  if (config.backend.database >= config.databases)
    errors.at(root["backend"]["database"], "backend.database",
              "must be below databases (" + std::to_string(config.databases) + ")");
  if (root["log_level"]) {
    config.log_level = fields.string(root["log_level"], "log_level");
    static constexpr std::string_view levels[] = {"trace", "debug",    "info", "warn",
                                                  "error", "critical", "off"};
    if (std::find(std::begin(levels), std::end(levels), config.log_level) == std::end(levels))
      errors.at(root["log_level"], "log_level",
                "expected one of trace, debug, info, warn, error, critical, off");
  }
  if (root["cluster"]) read_cluster(root["cluster"], fields, config.cluster);
  if (root["cluster_endpoint"])
    config.cluster_endpoint = fields.boolean(root["cluster_endpoint"], "cluster_endpoint");
  if (root["announce"]) {
    config.announce = fields.endpoint(root["announce"], "announce");
    if (config.announce->port == 0)
      errors.at(root["announce"], "announce", "expected the host:port clients connect to");
  }
  if (root["commands"]) read_commands(root["commands"], fields, config);
  // A fleet member may take its shards from etcd alone (config/shared_map.h).
  if (!root["shards"] && !config.cluster.enabled())
    errors.at(root, "shards", "missing: list the shards Santral routes to");
  if (root["shards"]) {
    auto nodes = read_shards(root["shards"], fields, config);
    validate_shards(config, nodes, "shards", errors);
  }
  if (root["namespaces"]) read_namespaces(root["namespaces"], fields, config);
  if (root["hotkeys"]) read_hotkeys(root["hotkeys"], fields, config.hotkeys);
  if (root["salting"]) read_salting(root["salting"], fields, config);
  if (root["near_cache"]) read_near_cache(root["near_cache"], fields, config.near_cache);
  check_near_cache(root, config, errors);
  if (root["resharding"]) read_resharding(root["resharding"], fields, config.resharding);
  if (config.workers == 0) config.workers = std::max(1u, std::thread::hardware_concurrency());
  return config;
}

}  // namespace santral::config
