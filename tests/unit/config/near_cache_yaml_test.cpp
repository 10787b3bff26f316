#include <catch2/catch.hpp>

#include <string>

#include "config/config.h"
#include "config/config_error.h"
#include "placement/shard_map.h"
#include "tests/support/config_text.h"

using namespace santral::config;
using namespace santral::placement;
using santral::test::check_config_errors;
using santral::test::kTwoShards;
using santral::test::load_config_text;

TEST_CASE("near_cache: is off by default and read with its settings") {
  Config plain = load_config_text(kTwoShards);
  CHECK_FALSE(plain.near_cache.enabled);
  CHECK(plain.near_cache.max_bytes == 64ull * 1024 * 1024);
  CHECK(plain.near_cache.min_reads_per_sec == 100);
  CHECK_FALSE(ShardMap(plain).near_cache_anywhere());

  Config c = load_config_text(
      kTwoShards + "near_cache: {enabled: true, max_bytes: 1mb, min_reads_per_sec: 5}\n");
  CHECK(c.near_cache.enabled);
  CHECK(c.near_cache.max_bytes == 1024 * 1024);
  CHECK(c.near_cache.min_reads_per_sec == 5);
  ShardMap map(c);
  CHECK(map.near_cache_anywhere());
  CHECK(map.near_cached("anything"));
}

TEST_CASE("a namespace's near_cache overrides the top-level setting for its keys") {
  std::string namespaces =
      "namespaces:\n"
      "  - name: sessions\n"
      "    match: \"session:{id}\"\n"
      "    strategy: hashed\n"
      "    near_cache: false\n"
      "  - name: posts\n"
      "    match: \"post:{id}\"\n"
      "    strategy: hashed\n"
      "    near_cache: true\n";
  Config on = load_config_text(kTwoShards + namespaces + "near_cache: {enabled: true}\n");
  ShardMap map_on(on);
  CHECK_FALSE(map_on.near_cached("session:1"));
  CHECK(map_on.near_cached("post:1"));
  CHECK(map_on.near_cached("other"));

  Config off = load_config_text(kTwoShards + namespaces);
  ShardMap map_off(off);
  CHECK(map_off.near_cache_anywhere());  // posts asks for it
  CHECK_FALSE(map_off.near_cached("session:1"));
  CHECK(map_off.near_cached("post:1"));
  CHECK_FALSE(map_off.near_cached("other"));
}

TEST_CASE("full.yaml shows the near-cache settings") {
  Config c = load_config(SANTRAL_SOURCE_DIR "/config/examples/full.yaml");
  CHECK_FALSE(c.near_cache.enabled);
  CHECK(c.near_cache.max_bytes == 64ull * 1024 * 1024);
}

TEST_CASE("near_cache config errors name the file, the line and the key") {
  check_config_errors({
      {"near_cache:\n  enabled: maybe\n", 7, "near_cache.enabled", ""},
      {"near_cache:\n  max_bytes: 1kb\n", 7, "near_cache.max_bytes", "at least 64kb"},
      {"near_cache:\n  max_bytes: lots\n", 7, "near_cache.max_bytes", ""},
      {"near_cache:\n  min_reads_per_sec: 0\n", 7, "near_cache.min_reads_per_sec", "out of range"},
      {"near_cache:\n  size: 1mb\n", 7, "near_cache.size", "unknown key"},
      {"near_cache: true\n", 6, "near_cache", "expected a map"},
      {"hotkeys: {enabled: false}\nnear_cache:\n  enabled: true\n", 8, "near_cache.enabled",
       "needs hot-key detection"},
      {"hotkeys: {enabled: false}\nnamespaces:\n  - name: p\n    match: \"p:{id}\"\n"
       "    strategy: hashed\n    near_cache: true\n",
       11, "namespaces[0].near_cache", "needs hot-key detection"},
      {"namespaces:\n  - name: p\n    match: \"p:{id}\"\n    strategy: hashed\n"
       "    near_cache: often\n",
       10, "namespaces[0].near_cache", ""},
  });
}
