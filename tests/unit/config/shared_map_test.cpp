#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/shared_map.h"

using namespace santral::config;

namespace {
constexpr const char* kFile = R"(listen: 127.0.0.1:7000
workers: 3
hash: fnv1a_64
shards:
  - name: a
    address: 127.0.0.1:7001
databases: 4
admin:
  listen: 127.0.0.1:8000
cluster:
  etcd: [127.0.0.1:2379]
  name: prod
)";
}  // namespace

TEST_CASE("the shared part of a file is its map, without the router's own settings") {
  auto text = shared_map_text(kFile, "santral.yaml");
  auto shared = YAML::Load(text);
  CHECK(shared["shards"]);
  CHECK(shared["hash"].as<std::string>() == "fnv1a_64");
  CHECK(shared["databases"].as<int>() == 4);
  CHECK_FALSE(shared["listen"]);
  CHECK_FALSE(shared["workers"]);
  CHECK_FALSE(shared["admin"]);
  CHECK_FALSE(shared["cluster"]);
  // It is a config of its own.
  auto parsed = parse_config(text, "etcd");
  CHECK(parsed.shards.size() == 1);
}

TEST_CASE("a router takes the shared part and keeps its own settings") {
  auto local = parse_config(kFile, "santral.yaml");
  auto shared = parse_config(
      "shards:\n  - name: b\n    address: 127.0.0.1:7002\n  - name: c\n    address: "
      "127.0.0.1:7003\ndatabases: 8\n",
      "etcd");
  adopt_shared_map(local, shared);
  CHECK(local.shards.size() == 2);
  CHECK(local.databases == 8);
  CHECK(local.hash_name == "murmur");
  CHECK(local.listen.port == 7000);
  CHECK(local.workers == 3);
  CHECK(local.admin.listen.port == 8000);
  CHECK(local.cluster.name == "prod");
}

TEST_CASE("cluster: is read and checked; a fleet member's file may leave shards to etcd") {
  auto config = parse_config(
      "cluster:\n  etcd: [127.0.0.1:2379, '[::1]:2379']\n  name: prod\n  lease_ttl_s: 4\n",
      "santral.yaml");
  CHECK(config.cluster.enabled());
  CHECK(config.cluster.etcd == std::vector<std::string>{"127.0.0.1:2379", "[::1]:2379"});
  CHECK(config.cluster.lease_ttl == std::chrono::seconds(4));
  CHECK(config.cluster.prefix() == "/santral/prod/");
  CHECK_FALSE(has_shard_map(config));
  CHECK_THROWS_WITH(parse_config("cluster:\n  etcd: []\n  name: x\n", "f.yaml"),
                    Catch::Contains("cluster.etcd"));
  CHECK_THROWS_WITH(parse_config("cluster:\n  etcd: [127.0.0.1:2379]\n", "f.yaml"),
                    Catch::Contains("cluster.name"));
  CHECK_THROWS_WITH(parse_config("cluster:\n  etcd: [nohost]\n  name: x\n", "f.yaml"),
                    Catch::Contains("f.yaml:2: cluster.etcd[0]"));
  CHECK_THROWS_WITH(parse_config("listen: 127.0.0.1:1\n", "f.yaml"), Catch::Contains("shards"));
  CHECK(config.cluster.fence == ClusterSettings::Fence::Lease);
  CHECK(parse_config("cluster:\n  etcd: [127.0.0.1:2379]\n  name: x\n  fence: acl\n", "f.yaml")
            .cluster.fence == ClusterSettings::Fence::Acl);
  CHECK_THROWS_WITH(
      parse_config("cluster:\n  etcd: [127.0.0.1:2379]\n  name: x\n  fence: tokens\n", "f.yaml"),
      Catch::Contains("f.yaml:4: cluster.fence: expected lease"));
}
