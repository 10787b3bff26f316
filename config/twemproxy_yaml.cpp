#include <algorithm>
#include <charconv>
#include <thread>

#include <fmt/format.h>

#include "config/loaders.h"
#include "config/yaml_fields.h"

namespace santral::config {
namespace {

// Every directive nutcracker 0.5 accepts in a pool.
constexpr std::string_view kPoolKeys[] = {"listen",
                                          "client_connections",
                                          "tcpkeepalive",
                                          "hash",
                                          "hash_tag",
                                          "distribution",
                                          "timeout",
                                          "backlog",
                                          "preconnect",
                                          "redis",
                                          "redis_auth",
                                          "redis_db",
                                          "server_connections",
                                          "auto_eject_hosts",
                                          "server_retry_timeout",
                                          "server_failure_limit",
                                          "servers",
                                          "reuseport"};

// "host:port:weight [name]", as nutcracker's conf_add_server reads it.
ShardConfig read_server(const YAML::Node& node, const std::string& key, const YamlFields& fields) {
  std::string text = fields.string(node, key);
  auto space = text.find(' ');
  std::string address = text.substr(0, space);
  std::string name;
  if (space != std::string::npos) {
    name = text.substr(space + 1);
    name.erase(0, name.find_first_not_of(' '));
  }
  if (!address.empty() && address.front() == '/')
    fields.errors().at(node, key,
                       "unix-domain socket servers are not supported; give the server as "
                       "host:port:weight");
  auto last = address.rfind(':');
  ShardConfig shard;
  std::int64_t weight = 0;
  std::string weight_text = last == std::string::npos ? "" : address.substr(last + 1);
  auto [end, ec] =
      std::from_chars(weight_text.data(), weight_text.data() + weight_text.size(), weight);
  if (last == std::string::npos || ec != std::errc{} ||
      end != weight_text.data() + weight_text.size() || weight < 1 ||
      !parse_endpoint(address.substr(0, last), shard.address))
    fields.errors().at(
        node, key, "expected 'host:port:weight [name]' as in nutcracker.yml, got '" + text + "'");
  shard.weight = static_cast<std::uint32_t>(weight);
  // Without a name twemproxy hashes "host:port" onto the ring, or just "host" when the port is
  // memcached's 11211 (libmemcached compatibility).
  std::string unnamed = shard.address.port == 11211 ? shard.address.host : address.substr(0, last);
  shard.ring_name = name.empty() ? unnamed : name;
  shard.name = name.empty() ? address.substr(0, last) : name;
  return shard;
}

}  // namespace

bool looks_like_twemproxy(const YAML::Node& root) {
  if (!root.IsMap() || root["shards"]) return false;
  for (const auto& item : root)
    if (item.second.IsMap() && item.second["servers"]) return true;
  return false;
}

Config read_twemproxy_yaml(const YAML::Node& root, const ConfigErrors& errors,
                           const std::string& pool_name) {
  YamlFields fields(errors);
  if (!root.IsMap() || root.size() == 0)
    errors.at(root, "", "expected a mapping of pool names to pools, as in nutcracker.yml");
  std::vector<std::string> pools;
  for (const auto& item : root) pools.push_back(item.first.as<std::string>());
  std::string chosen = pool_name;
  if (chosen.empty()) {
    if (pools.size() > 1) {
      std::string names;
      for (auto& p : pools) names += (names.empty() ? "" : ", ") + p;
      errors.at(root, "",
                "this nutcracker.yml has " + std::to_string(pools.size()) + " pools (" + names +
                    "); run one Santral per pool and pick it with --pool NAME");
    }
    chosen = pools.front();
  } else if (std::find(pools.begin(), pools.end(), chosen) == pools.end()) {
    errors.at(root, "", "no pool named '" + chosen + "' in this file");
  }
  const YAML::Node pool = root[chosen];
  fields.only_keys(pool, chosen, kPoolKeys);
  auto key = [&](std::string_view name) { return chosen + "." + std::string(name); };

  Config config;
  config.format = ConfigFormat::Twemproxy;
  config.hash_tag.clear();  // twemproxy hashes whole keys unless hash_tag is set
  config.hash = hashkit::hash_function_named(config.hash_name).value();
  if (!pool["redis"] || !fields.boolean(pool["redis"], key("redis")))
    errors.at(pool["redis"] ? pool["redis"] : pool, key("redis"),
              "pool '" + chosen +
                  "' is a memcached pool (twemproxy's default is redis: false); "
                  "Santral speaks only Redis, so a Redis pool says 'redis: true'");
  if (!pool["listen"]) errors.at(pool, key("listen"), "missing: the address the pool listens on");
  const YAML::Node listen = pool["listen"];
  if (listen.IsScalar() && !listen.Scalar().empty() && listen.Scalar().front() == '/')
    errors.at(listen, key("listen"), "unix-domain sockets are not supported; listen on host:port");
  config.listen = fields.endpoint(listen, key("listen"));
  if (pool["hash"]) {
    config.hash = fields.hash(pool["hash"], key("hash"));
    config.hash_name = pool["hash"].Scalar();
  }
  if (pool["distribution"])
    config.distribution = fields.distribution(pool["distribution"], key("distribution"));
  if (pool["hash_tag"]) config.hash_tag = fields.hash_tag(pool["hash_tag"], key("hash_tag"));
  if (pool["timeout"]) config.timeouts.request = fields.millis(pool["timeout"], key("timeout"));
  if (pool["server_connections"])
    config.backend.connections_per_shard = static_cast<std::uint32_t>(
        fields.integer(pool["server_connections"], key("server_connections"), 1, 64));
  if (pool["client_connections"]) {
    auto limit =
        fields.integer(pool["client_connections"], key("client_connections"), 0, 10'000'000);
    if (limit > 0) config.limits.max_clients = static_cast<std::size_t>(limit);
  }
  if (pool["redis_auth"]) {
    config.password = fields.string(pool["redis_auth"], key("redis_auth"));
    config.backend.password = config.password;
  }
  if (pool["redis_db"])
    config.backend.database =
        static_cast<int>(fields.integer(pool["redis_db"], key("redis_db"), 0, 65535));
  for (std::string_view flag : {"preconnect", "auto_eject_hosts", "tcpkeepalive", "reuseport"})
    if (pool[std::string(flag)]) fields.boolean(pool[std::string(flag)], key(flag));
  if (pool["auto_eject_hosts"] && pool["auto_eject_hosts"].as<std::string>() == "true")
    config.warnings.push_back(
        key("auto_eject_hosts") +
        ": ignored. Santral never moves a down shard's keys to the "
        "other shards (that would split their data); their requests get a clear error until "
        "the shard is back");
  for (std::string_view number : {"backlog", "server_retry_timeout", "server_failure_limit"})
    if (pool[std::string(number)])
      fields.integer(pool[std::string(number)], key(number), 0, 1ll << 40);

  const YAML::Node servers = pool["servers"];
  if (!servers.IsSequence() || servers.size() == 0)
    errors.at(servers, key("servers"), "expected a list of 'host:port:weight [name]' servers");
  std::vector<YAML::Node> nodes;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    config.shards.push_back(
        read_server(servers[i], fmt::format("{}[{}]", key("servers"), i), fields));
    nodes.push_back(servers[i]);
  }
  validate_shards(config, nodes, key("servers"), errors);
  config.workers = std::max(1u, std::thread::hardware_concurrency());
  return config;
}

}  // namespace santral::config
