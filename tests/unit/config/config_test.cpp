#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "config/config_error.h"

using namespace santral::config;

namespace {

// Writes `text` to a fresh file named `name` and loads it.
Config load_text(const std::string& text, const std::string& name = "santral.yaml",
                 ConfigFormat format = ConfigFormat::Auto, const std::string& pool = "") {
  auto dir = std::filesystem::temp_directory_path() / "santral-config-test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << text;
  return load_config(path, format, pool);
}

// The error a config produces; fails the test if it loads.
ConfigError error_of(const std::string& text, const std::string& name = "santral.yaml") {
  try {
    load_text(text, name);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("config loaded but should have been rejected:\n" << text);
  throw std::logic_error("unreachable");
}

const std::string kShards =
    "shards:\n"
    "  - name: a\n"
    "    address: 127.0.0.1:7001\n"
    "  - name: b\n"
    "    address: 127.0.0.1:7002\n"
    "    weight: 3\n";

}  // namespace

TEST_CASE("a minimal Santral config gets the documented defaults") {
  Config c = load_text(kShards);
  CHECK(c.format == ConfigFormat::Santral);
  CHECK(c.listen.text() == "127.0.0.1:6380");
  CHECK(c.workers >= 1);
  CHECK(c.hash_name == "murmur");
  CHECK(c.hash != nullptr);
  CHECK(c.distribution == Distribution::Ketama);
  CHECK(c.hash_tag == "{}");
  REQUIRE(c.shards.size() == 2);
  CHECK(c.shards[1].name == "b");
  CHECK(c.shards[1].address.port == 7002);
  CHECK(c.shards[1].weight == 3);
  CHECK(c.shards[1].ring_name == "b");
  CHECK(c.timeouts.request.count() == 2000);
  CHECK(c.limits.request.max_bulk_bytes == 512ull * 1024 * 1024);
  CHECK(c.resharding.batch_keys == 100);
  CHECK(c.resharding.batch_bytes == 256 * 1024);
}

TEST_CASE("every setting is read") {
  Config c = load_text(
      "listen: '[::1]:7000'\n"
      "workers: 3\n"
      "hash: murmur\n"
      "distribution: modula\n"
      "hash_tag: ''\n"
      "password: s3cret\n"
      "log_level: debug\n"
      "timeouts: {connect_ms: 10, request_ms: 20, reconnect_min_ms: 5, reconnect_max_ms: 50}\n"
      "backend: {connections_per_shard: 4, username: u, password: p, database: 2}\n"
      "limits: {max_clients: 7, max_args: 8, max_bulk_bytes: 1mb, max_inline_bytes: 4kb,\n"
      "         max_pending_requests: 9, max_output_bytes: 2k}\n"
      "resharding: {batch_keys: 50, batch_bytes: 64kb}\n" +
      kShards);
  CHECK(c.listen.host == "::1");
  CHECK(c.listen.text() == "[::1]:7000");
  CHECK(c.workers == 3);
  CHECK(c.hash_name == "murmur");
  CHECK(c.distribution == Distribution::Modula);
  CHECK(c.hash_tag.empty());
  CHECK(c.password == "s3cret");
  CHECK(c.log_level == "debug");
  CHECK(c.timeouts.connect.count() == 10);
  CHECK(c.timeouts.reconnect_max.count() == 50);
  CHECK(c.backend.connections_per_shard == 4);
  CHECK(c.backend.username == "u");
  CHECK(c.backend.database == 2);
  CHECK(c.limits.max_clients == 7);
  CHECK(c.limits.request.max_args == 8);
  CHECK(c.limits.request.max_bulk_bytes == 1024 * 1024);
  CHECK(c.limits.request.max_inline_bytes == 4096);
  CHECK(c.limits.max_pending_requests == 9);
  CHECK(c.limits.max_output_bytes == 2000);
  CHECK(c.resharding.batch_keys == 50);
  CHECK(c.resharding.batch_bytes == 64 * 1024);
}

TEST_CASE("config errors name the file, the line and the key") {
  struct Case {
    std::string text;
    int line;
    std::string key;
    std::string says;
  };
  const Case cases[] = {
      {"listen: nowhere\n" + kShards, 1, "listen", "expected host:port"},
      {"listen: 127.0.0.1:99999\n" + kShards, 1, "listen", "expected host:port"},
      {"workers: many\n" + kShards, 1, "workers", "whole number"},
      {"workers: -1\n" + kShards, 1, "workers", "out of range"},
      {"hash: sha1\n" + kShards, 1, "hash", "unknown hash function 'sha1'"},
      {"distribution: round\n" + kShards, 1, "distribution", "ketama, modula or random"},
      {"hash_tag: '{'\n" + kShards, 1, "hash_tag", "two characters"},
      {"shard:\n  - a\n" + kShards, 1, "shard", "unknown key"},
      {"log_level: loud\n" + kShards, 1, "log_level", "expected one of"},
      {"timeouts:\n  request_ms: 0\n" + kShards, 2, "timeouts.request_ms", "out of range"},
      {"timeouts:\n  reqest_ms: 10\n" + kShards, 2, "timeouts.reqest_ms", "unknown key"},
      {"timeouts:\n  reconnect_min_ms: 100\n  reconnect_max_ms: 10\n" + kShards, 3,
       "timeouts.reconnect_max_ms", "must not be smaller"},
      {"backend:\n  connections_per_shard: 0\n" + kShards, 2, "backend.connections_per_shard",
       "out of range"},
      {"backend:\n  username: x\n" + kShards, 2, "backend.username", "needs a password"},
      {"limits:\n  max_bulk_bytes: lots\n" + kShards, 2, "limits.max_bulk_bytes", "size in bytes"},
      {"resharding:\n  batch_bytes: 1x\n" + kShards, 2, "resharding.batch_bytes", "size in bytes"},
      {"listen: 127.0.0.1:1\n", 1, "shards", "missing"},
      {"shards: []\n", 1, "shards", "expected a list of shards"},
      {"shards:\n  - name: a\n", 2, "shards[0].address", "needs an address"},
      {"shards:\n  - address: 127.0.0.1:1\n", 2, "shards[0].name", "needs a name"},
      {"shards:\n  - name: a\n    address: 127.0.0.1:1\n    weight: 0\n", 4, "shards[0].weight",
       "out of range"},
      {"shards:\n  - name: a\n    address: 127.0.0.1:1\n  - name: a\n    address: 127.0.0.1:2\n", 4,
       "shards[1]", "already used by shards[0]"},
      {"shards:\n  - name: a\n    address: 127.0.0.1:1\n  - name: b\n    address: 127.0.0.1:1\n", 4,
       "shards[1]", "address 127.0.0.1:1 is already used"},
      {"shards: [\n", 2, "", "not valid YAML"},
      {"write_concern: 1\n" + kShards, 1, "write_concern", "expected a map with replicas"},
      {"write_concern:\n  replicas: -1\n" + kShards, 2, "write_concern.replicas", "out of range"},
      {"write_concern:\n  timeout_ms: 0\n" + kShards, 2, "write_concern.timeout_ms",
       "out of range"},
      {"write_concern:\n  w: 1\n" + kShards, 2, "write_concern.w", "unknown key"},
      {"read_from:\n  mode: nearest\n" + kShards, 2, "read_from.mode",
       "expected primary, prefer-replica or replica"},
      {"read_from:\n  max_lag: 5\n" + kShards, 2, "read_from.max_lag", "unknown key"},
      {"failover: 5\n" + kShards, 1, "failover", "expected a map with wait_ms"},
      {"failover:\n  wait_ms: -1\n" + kShards, 2, "failover.wait_ms", "out of range"},
      {"failover:\n  wait: 5\n" + kShards, 2, "failover.wait", "unknown key"},
      {"shutdown: 5\n" + kShards, 1, "shutdown", "expected a map: {ready_delay_ms"},
      {"shutdown:\n  ready_delay_ms: -1\n" + kShards, 2, "shutdown.ready_delay_ms", "out of range"},
      {"shutdown:\n  ready_delay: 5\n" + kShards, 2, "shutdown.ready_delay", "unknown key"},
      {"audit: on\n" + kShards, 1, "audit", "expected a map: {path:"},
      {"audit:\n  max_bytes: 1mb\n" + kShards, 2, "audit.path", "missing"},
      {"audit:\n  path: ''\n" + kShards, 2, "audit.path", "must not be empty"},
      {"audit:\n  path: /tmp/a.log\n  max_bytes: 100\n" + kShards, 3, "audit.max_bytes",
       "at least 4kb"},
      {"audit:\n  path: /tmp/a.log\n  max_files: 0\n" + kShards, 3, "audit.max_files",
       "out of range"},
      {"audit:\n  file: /tmp/a.log\n" + kShards, 2, "audit.file", "unknown key"},
      {"failover:\n  wait_ms: 10\n  on_lost_writes: ignore\n" + kShards, 3,
       "failover.on_lost_writes", "expected refuse"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto e = error_of(c.text, "bad.yaml");
    std::string what = e.what();
    INFO(what);
    CHECK(e.line() == c.line);
    CHECK(e.key() == c.key);
    CHECK(what.find("bad.yaml:" + std::to_string(c.line)) != std::string::npos);
    CHECK(what.find(c.says) != std::string::npos);
  }
}

TEST_CASE("shutdown.ready_delay_ms is 0 and the audit log off by default; both are read") {
  Config plain = load_text(kShards);
  CHECK(plain.shutdown.ready_delay.count() == 0);
  CHECK_FALSE(plain.audit.enabled());
  Config c = load_text(
      "shutdown: {ready_delay_ms: 5000}\n"
      "audit: {path: stderr, max_bytes: 1mb, max_files: 3}\n" +
      kShards);
  CHECK(c.shutdown.ready_delay.count() == 5000);
  CHECK(c.audit.to_stderr());
  CHECK(c.audit.max_bytes == 1024 * 1024);
  CHECK(c.audit.max_files == 3);
}

TEST_CASE("write_concern is off by default and read with its bound") {
  CHECK(load_text(kShards).write_concern.replicas == 0);
  Config c = load_text("write_concern: {replicas: 2, timeout_ms: 250}\n" + kShards);
  CHECK(c.write_concern.replicas == 2);
  CHECK(c.write_concern.timeout == std::chrono::milliseconds(250));
}

TEST_CASE("failover.wait_ms is 0 (fail at once) by default") {
  CHECK(load_text(kShards).failover.wait.count() == 0);
  CHECK(load_text("failover: {wait_ms: 3000}\n" + kShards).failover.wait ==
        std::chrono::milliseconds(3000));
}

TEST_CASE("failover.on_lost_writes: refuse by default with a write concern, accept without") {
  CHECK(load_text(kShards).lost_writes_policy() == LostWritesPolicy::Accept);
  CHECK(load_text("write_concern: {replicas: 1}\n" + kShards).lost_writes_policy() ==
        LostWritesPolicy::Refuse);
  CHECK(load_text("write_concern: {replicas: 1}\nfailover: {on_lost_writes: accept}\n" + kShards)
            .lost_writes_policy() == LostWritesPolicy::Accept);
  CHECK(load_text("failover: {on_lost_writes: refuse}\n" + kShards).lost_writes_policy() ==
        LostWritesPolicy::Refuse);
}

TEST_CASE("read_from is a mode, or a map with the mode and a bound on replica lag") {
  Config plain = load_text("read_from: replica\n" + kShards);
  CHECK(plain.read_from == ReadFrom::Replica);
  CHECK(plain.replica_max_lag.count() == 0);
  Config bounded = load_text("read_from: {mode: prefer-replica, max_lag_ms: 500}\n" + kShards);
  CHECK(bounded.read_from == ReadFrom::PreferReplica);
  CHECK(bounded.replica_max_lag == std::chrono::milliseconds(500));
  CHECK(load_text("read_from: {max_lag_ms: 50}\n" + kShards).read_from == ReadFrom::Primary);
}

TEST_CASE("a missing file is a config error naming it") {
  try {
    load_config("/nonexistent/santral.yaml");
    FAIL("loaded a file that does not exist");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/santral.yaml") != std::string::npos);
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
  }
}

TEST_CASE("a nutcracker.yml is detected and read the way twemproxy reads it") {
  Config c = load_text(
      "beta:\n"
      "  listen: 127.0.0.1:22122\n"
      "  hash: fnv1a_32\n"
      "  hash_tag: \"{}\"\n"
      "  distribution: modula\n"
      "  auto_eject_hosts: true\n"
      "  redis: true\n"
      "  timeout: 400\n"
      "  server_connections: 2\n"
      "  redis_auth: pw\n"
      "  redis_db: 3\n"
      "  servers:\n"
      "   - 127.0.0.1:6379:1 server1\n"
      "   - 127.0.0.1:6380:2\n"
      "   - 127.0.0.1:11211:1\n",
      "nutcracker.yml");
  CHECK(c.format == ConfigFormat::Twemproxy);
  CHECK(c.listen.text() == "127.0.0.1:22122");
  CHECK(c.hash_name == "fnv1a_32");
  CHECK(c.distribution == Distribution::Modula);
  CHECK(c.hash_tag == "{}");
  CHECK(c.timeouts.request.count() == 400);
  CHECK(c.backend.connections_per_shard == 2);
  CHECK(c.password == "pw");
  CHECK(c.backend.password == "pw");
  CHECK(c.backend.database == 3);
  REQUIRE(c.shards.size() == 3);
  CHECK(c.shards[0].name == "server1");
  CHECK(c.shards[0].ring_name == "server1");
  CHECK(c.shards[1].name == "127.0.0.1:6380");
  CHECK(c.shards[1].ring_name == "127.0.0.1:6380");
  CHECK(c.shards[1].weight == 2);
  CHECK(c.shards[2].ring_name == "127.0.0.1");  // twemproxy drops memcached's port 11211
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("auto_eject_hosts") != std::string::npos);
}

TEST_CASE("twemproxy defaults: no hash tag, fnv1a_64, ketama") {
  Config c = load_text("p:\n  listen: 127.0.0.1:1\n  redis: true\n  servers:\n   - 127.0.0.1:2:1\n",
                       "nutcracker.yml");
  CHECK(c.hash_tag.empty());
  CHECK(c.hash_name == "fnv1a_64");
  CHECK(c.distribution == Distribution::Ketama);
}

TEST_CASE("twemproxy config errors") {
  struct Case {
    std::string text;
    int line;
    std::string says;
  };
  const Case cases[] = {
      {"p:\n  listen: 127.0.0.1:1\n  servers:\n   - 127.0.0.1:2:1\n", 2, "memcached pool"},
      {"p:\n  listen: 127.0.0.1:1\n  redis: false\n  servers:\n   - 127.0.0.1:2:1\n", 3,
       "memcached pool"},
      {"p:\n  listen: /tmp/sock 0666\n  redis: true\n  servers:\n   - 127.0.0.1:2:1\n", 2,
       "unix-domain"},
      {"p:\n  listen: 127.0.0.1:1\n  redis: true\n  servers:\n   - 127.0.0.1:2\n", 5,
       "host:port:weight"},
      {"p:\n  listen: 127.0.0.1:1\n  redis: true\n  servers:\n   - 127.0.0.1:2:0\n", 5,
       "host:port:weight"},
      {"p:\n  listen: 127.0.0.1:1\n  redis: true\n  mbuf: 3\n  servers:\n   - 127.0.0.1:2:1\n", 4,
       "unknown key"},
      {"p:\n  listen: 127.0.0.1:1\n  redis: true\n  servers:\n   - 127.0.0.1:2:1\n"
       "q:\n  listen: 127.0.0.1:3\n  redis: true\n  servers:\n   - 127.0.0.1:4:1\n",
       1, "--pool"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    try {
      load_text(c.text, "nutcracker.yml");
      FAIL("accepted a bad nutcracker.yml");
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(e.line() == c.line);
      CHECK(std::string(e.what()).find(c.says) != std::string::npos);
    }
  }
}

TEST_CASE("--pool picks one pool of several") {
  std::string text =
      "p:\n  listen: 127.0.0.1:1\n  redis: true\n  servers:\n   - 127.0.0.1:2:1\n"
      "q:\n  listen: 127.0.0.1:3\n  redis: true\n  servers:\n   - 127.0.0.1:4:1\n";
  Config c = load_text(text, "nutcracker.yml", ConfigFormat::Auto, "q");
  CHECK(c.listen.port == 3);
  CHECK_THROWS_AS(load_text(text, "nutcracker.yml", ConfigFormat::Auto, "r"), ConfigError);
}

TEST_CASE("every example config under config/examples loads") {
  int loaded = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(SANTRAL_SOURCE_DIR "/config/examples")) {
    INFO(entry.path());
    Config c = load_config(entry.path());
    CHECK_FALSE(c.shards.empty());
    ++loaded;
  }
  CHECK(loaded >= 3);
}
