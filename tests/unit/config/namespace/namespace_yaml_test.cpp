// config/namespace/namespace_yaml.cpp: reading namespaces from YAML; every validation error
// names the file, the line and the key.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "placement/namespace/key_slot.h"
#include "tests/support/namespace_fixtures.h"

using namespace santral::config;
using namespace santral::placement;
using namespace santral::config::fixtures;

namespace {

const std::string kFullSlots = "    slots: [{shard: a, from: 0, to: 16383}]\n";

}  // namespace

TEST_CASE("the example namespaces config loads and places its documented keys") {
  Config c =
      load_config(std::filesystem::path(SANTRAL_SOURCE_DIR) / "config/examples/namespaces.yaml");
  ShardMap map(c);
  CHECK(map.namespaces().size() == 6);
  CHECK(map.place("order:seller42:1").shard == 1);
  CHECK(map.place("invoice:1500000:1").shard == 1);
  CHECK(map.place("cart:u:i").namespace_name == "carts");
}

TEST_CASE("namespace list and entry errors") {
  const ErrorCase cases[] = {
      {"namespaces: {a: 1}  #<\n", "namespaces", "expected a list of namespaces"},
      {N + "  - just-a-string  #<\n", "namespaces[0]", "expected a namespace"},
      {N + "  - match: \"x:{id}\"  #<\n    strategy: hashed\n", "namespaces[0].name",
       "missing: every namespace needs a name"},
      {N + entry("\"\"  #<", "x:{id}", "hashed"), "namespaces[0].name", "must not be empty"},
      {N + "  - name: s  #<\n    strategy: hashed\n", "namespaces[0].match",
       "missing: the key pattern"},
      {N + "  - name: s\n    match: \"x:{id\"  #<\n    strategy: hashed\n", "namespaces[0].match",
       "'{' without a closing '}'"},
      {N + "  - name: s\n    match: \"x:{a}{b}\"  #<\n    strategy: hashed\n",
       "namespaces[0].match", "must be separated by literal text"},
      {N + "  - name: s\n    match: \"x:{a}:{a}\"  #<\n    strategy: hashed\n",
       "namespaces[0].match", "appears twice"},
      {N + "  - name: s\n    match: \"\"  #<\n    strategy: hashed\n", "namespaces[0].match",
       "must not be empty"},
      {N + "  - name: s\n    match: \"x:{id}\"\n    shard_key: user  #<\n    strategy: hashed\n",
       "namespaces[0].shard_key", "names no field of match 'x:{id}' (its fields: id)"},
      {N + "  - name: s\n    match: \"config\"\n    shard_key: id  #<\n    strategy: hashed\n",
       "namespaces[0].shard_key", "(its fields: none)"},
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n", "namespaces[0].strategy",
       "missing: one of hashed, slots, range, directory, zone"},
      {N + entry("s", "x:{id}", "consistent  #<"), "namespaces[0].strategy",
       "unknown strategy 'consistent'"},
      {N + entry("s", "x:{id}", "hashed", "    ranges: []  #<\n"), "namespaces[0].ranges",
       "is a setting of the range strategy, not of hashed"},
      {N + entry("s", "x:{id}", "hashed", "    groups: {}  #<\n"), "namespaces[0].groups",
       "is a setting of the directory or zone strategy, not of hashed"},
      {N + entry("s", "x:{id}", "range", "    vnodes: 10  #<\n"), "namespaces[0].vnodes",
       "is a setting of the hashed or zone strategy, not of range"},
      {N + entry("s", "x:{id}", "slots", "    order: numeric  #<\n"), "namespaces[0].order",
       "is a setting of the range strategy, not of slots"},
      {N + entry("s", "x:{id}", "hashed", "    color: red  #<\n"), "namespaces[0].color",
       "unknown key (expected one of: name, match, shard_key, strategy, read_from, write_concern, "
       "near_cache, limits, hash, vnodes, shards)"},
      {N + entry("s", "x:{id}", "hashed", "    limits: {requests_per_s: 5, max_pipeline: 2}  #<\n"),
       "namespaces[0].limits.max_pipeline", "connections, pipelines and waiting are a user's"},
      {N + entry("s", "x:{id}", "hashed", "    limits: {requests_per_s: 5, wait_ms: 20}  #<\n"),
       "namespaces[0].limits.wait_ms", "connections, pipelines and waiting are a user's"},
      {N + entry("s", "x:{id}", "hashed", "    limits: {burst: 5}  #<\n"),
       "namespaces[0].limits.burst", "a burst needs requests_per_s"},
      {N + entry("s", "x:{id}", "hashed", "    limits: 5  #<\n"), "namespaces[0].limits",
       "expected a map"},
      {N + entry("s", "x:{id}", "hashed") + entry("s  #<", "y:{id}", "hashed"),
       "namespaces[1].name", "namespace name 's' is already used by namespaces[0]"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("hashed namespace errors") {
  const ErrorCase cases[] = {
      {N + entry("s", "x:{id}", "hashed", "    shards: [a, x]  #<\n"), "namespaces[0].shards[1]",
       "unknown shard 'x' (shards: a, b, c, d)"},
      {N + entry("s", "x:{id}", "hashed", "    shards: []  #<\n"), "namespaces[0].shards",
       "expected a non-empty list of shard names"},
      {N + entry("s", "x:{id}", "hashed", "    shards: b  #<\n"), "namespaces[0].shards",
       "expected a non-empty list of shard names"},
      {N + entry("s", "x:{id}", "hashed", "    shards: [a, b, a]  #<\n"), "namespaces[0].shards[2]",
       "shard 'a' is listed twice"},
      {N + entry("s", "x:{id}", "hashed", "    vnodes: 0  #<\n"), "namespaces[0].vnodes",
       "out of range"},
      {N + entry("s", "x:{id}", "hashed", "    vnodes: many  #<\n"), "namespaces[0].vnodes",
       "whole number"},
      {N + entry("s", "x:{id}", "hashed", "    hash: sha1  #<\n"), "namespaces[0].hash",
       "unknown hash function 'sha1'"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("slots namespace errors: coverage, gaps, overlaps") {
  const ErrorCase cases[] = {
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: slots\n", "namespaces[0].slots",
       "missing: a slots namespace needs its slot ranges"},
      {N + entry("s", "x:{id}", "slots", "    slots: 5  #<\n"), "namespaces[0].slots",
       "expected a list of slot ranges"},
      {N + entry("s", "x:{id}", "slots", "    slots: []  #<\n"), "namespaces[0].slots",
       "expected a list of slot ranges"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 16383, weight: 1}  #<\n"),
       "namespaces[0].slots[0].weight", "unknown key"},
      {N + entry("s", "x:{id}", "slots", "    slots:\n      - {shard: a, to: 16383}  #<\n"),
       "namespaces[0].slots[0].from", "missing: every slot range needs shard, from and to"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: z, from: 0, to: 16383}  #<\n"),
       "namespaces[0].slots[0].shard", "unknown shard 'z'"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 16384}  #<\n"),
       "namespaces[0].slots[0].to", "out of range"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: -1, to: 16383}  #<\n"),
       "namespaces[0].slots[0].from", "out of range"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 100}\n"
                 "      - {shard: b, from: 100, to: 99}  #<\n"),
       "namespaces[0].slots[1].to", "99 is below from (100)"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 99}\n"
                 "      - {shard: b, from: 200, to: 16383}  #<\n"),
       "namespaces[0].slots[1].from", "slots 100 to 199 are assigned to no shard"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 1, to: 16383}  #<\n"),
       "namespaces[0].slots[0].from", "slots 0 to 0 are assigned to no shard"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 8191}\n"
                 "      - {shard: b, from: 8000, to: 16383}  #<\n"),
       "namespaces[0].slots[1].from", "slots 8000 to 8191 are already assigned"},
      // Listed out of order: the overlap is found after sorting and reported at the entry as
      // written.
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: b, from: 100, to: 16383}  #<\n"
                 "      - {shard: a, from: 0, to: 200}\n"),
       "namespaces[0].slots[0].from", "slots 100 to 200 are already assigned"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 16000}  #<\n"),
       "namespaces[0].slots", "slots 16001 to 16383 are assigned to no shard"},
  };
  for (const auto& c : cases) check_error(c);

  // Complete ranges listed out of order are fine.
  ShardMap map = map_of(header() + N +
                        entry("s", "x:{id}", "slots",
                              "    slots:\n      - {shard: b, from: 8192, to: 16383}\n"
                              "      - {shard: a, from: 0, to: 8191}\n"));
  CHECK(map.shard_for_key("x:foo") == (key_slot("foo") < 8192 ? A : B));
}

TEST_CASE("range namespace errors: order, bounds, unsorted, overlapping, gapped") {
  const ErrorCase cases[] = {
      {N + entry("s", "x:{id}", "range", "    order: random  #<\n    ranges: [{shard: a}]\n"),
       "namespaces[0].order", "expected lexical or numeric, got 'random'"},
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: range\n", "namespaces[0].ranges",
       "missing: a range namespace needs its ranges"},
      {N + entry("s", "x:{id}", "range", "    ranges: []  #<\n"), "namespaces[0].ranges",
       "expected a non-empty list of ranges"},
      {N + entry("s", "x:{id}", "range", "    ranges:\n      - {shard: a, upto: m}  #<\n"),
       "namespaces[0].ranges[0].upto", "unknown key"},
      {N + entry("s", "x:{id}", "range", "    ranges:\n      - {to: m}  #<\n"),
       "namespaces[0].ranges[0].shard", "missing: every range needs a shard"},
      {N + entry("s", "x:{id}", "range", "    ranges:\n      - {shard: q}  #<\n"),
       "namespaces[0].ranges[0].shard", "unknown shard 'q'"},
      {N + entry("s", "x:{id}", "range",
                 "    order: numeric\n    ranges:\n      - {shard: a, to: 1e6}  #<\n"
                 "      - {shard: b, from: 1e6}\n"),
       "namespaces[0].ranges[0].to", "expected a whole number (order: numeric), got '1e6'"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, to: t}  #<\n"
                 "      - {shard: c, from: t}\n"),
       "namespaces[0].ranges[1].from", "only the first range may omit from"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: m}  #<\n"
                 "      - {shard: c, from: t}\n"),
       "namespaces[0].ranges[1].to", "only the last range may omit to"},
      {N + entry(
               "s", "x:{id}", "range",
               "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: m, to: m}  #<\n"),
       "namespaces[0].ranges[1].to", "'m' is not above from ('m')"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, from: m, to: t}\n"
                 "      - {shard: b, from: a, to: m}  #<\n"),
       "namespaces[0].ranges[1].from",
       "'a' is below the previous range's to ('t'): ranges must be sorted"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: k}  #<\n"),
       "namespaces[0].ranges[1].from", "'k' is below the previous range's to ('m')"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: n}  #<\n"),
       "namespaces[0].ranges[1].from", "leaves a gap [m, n) that no range holds"},
      // Numeric order compares numbers: 20 is below 100 although "20" sorts after "100".
      {N + entry("s", "x:{id}", "range",
                 "    order: numeric\n    ranges:\n      - {shard: a, to: 100}\n"
                 "      - {shard: b, from: 20}  #<\n"),
       "namespaces[0].ranges[1].from", "'20' is below the previous range's to ('100')"},
      {N + entry("s", "x:{id}", "range",
                 "    order: numeric\n    ranges:\n      - {shard: a, to: 20}\n"
                 "      - {shard: b, from: 100}  #<\n"),
       "namespaces[0].ranges[1].from", "leaves a gap [20, 100)"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("directory namespace errors") {
  const ErrorCase cases[] = {
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: directory\n",
       "namespaces[0].groups", "missing: a directory namespace needs its groups"},
      {N + entry("s", "x:{id}", "directory", "    groups: [a, b]  #<\n"), "namespaces[0].groups",
       "expected a mapping of groups to shards"},
      {N + entry("s", "x:{id}", "directory", "    groups:\n      seller1: zz  #<\n"),
       "namespaces[0].groups.seller1", "unknown shard 'zz'"},
      // A second line for a group (say, to move it) must not be silently outvoted by the first.
      {N + entry("s", "x:{id}", "directory",
                 "    groups:\n      seller42: d\n      seller7: a\n      seller42: b  #<\n"),
       "namespaces[0].groups.seller42", "group 'seller42' is listed twice"},
      {N + entry("s", "x:{id}", "directory", "    groups: {g: a}\n    fallback: slots  #<\n"),
       "namespaces[0].fallback", "a slots fallback needs its slots"},
      {N + entry("s", "x:{id}", "directory", "    groups: {g: a}\n    fallback: random  #<\n"),
       "namespaces[0].fallback", "expected hashed or slots, got 'random'"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: hashed\n      ring: 2  #<\n"),
       "namespaces[0].fallback.ring", "unknown key"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      shards: [a]  #<\n"),
       "namespaces[0].fallback.strategy", "missing: hashed or slots"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: ring  #<\n"),
       "namespaces[0].fallback.strategy", "expected hashed or slots, got 'ring'"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: slots\n      shards: [a]  #<\n"
                 "      slots: [{shard: a, from: 0, to: 16383}]\n"),
       "namespaces[0].fallback.shards", "is a setting of a hashed fallback, not of slots"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: slots  #<\n"),
       "namespaces[0].fallback.slots", "missing: a slots fallback needs its slots"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: slots\n      slots:\n"
                 "        - {shard: a, from: 0, to: 99}\n"
                 "        - {shard: b, from: 200, to: 16383}  #<\n"),
       "namespaces[0].fallback.slots[1].from", "slots 100 to 199 are assigned to no shard"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: hashed\n"
                 "      slots: [{shard: a, from: 0, to: 16383}]  #<\n"),
       "namespaces[0].fallback.slots", "is a setting of a slots fallback, not of hashed"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: hashed\n"
                 "      shards: [a, nope]  #<\n"),
       "namespaces[0].fallback.shards[1]", "unknown shard 'nope'"},
      {N + entry("s", "x:{id}", "directory", "    groups: {g: a}\n    zones: {eu: [a]}  #<\n"),
       "namespaces[0].zones", "is a setting of the zone strategy, not of directory"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("zone namespace errors: empty zones, unknown zones and shards") {
  const std::string eu = "    zones:\n      eu: [a, b]\n      us: [c, d]\n";
  const ErrorCase cases[] = {
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: zone\n    default_zone: eu\n",
       "namespaces[0].zones", "missing: a zone namespace needs its zones"},
      {N + entry("s", "x:{id}", "zone", "    zones: {}  #<\n    default_zone: eu\n"),
       "namespaces[0].zones", "expected a mapping of zones to shard lists"},
      {N + entry("s", "x:{id}", "zone", "    zones:\n      eu: []  #<\n    default_zone: eu\n"),
       "namespaces[0].zones.eu", "zone 'eu' is empty: list at least one shard"},
      {N + entry("s", "x:{id}", "zone", "    zones:\n      eu: [a, x]  #<\n    default_zone: eu\n"),
       "namespaces[0].zones.eu[1]", "unknown shard 'x'"},
      {N + entry("s", "x:{id}", "zone", eu + "    groups: [g]  #<\n    default_zone: eu\n"),
       "namespaces[0].groups", "expected a mapping of groups to zones"},
      {N + entry("s", "x:{id}", "zone",
                 eu + "    groups:\n      tenantA: mars  #<\n    default_zone: eu\n"),
       "namespaces[0].groups.tenantA", "unknown zone 'mars' (zones: eu, us)"},
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: zone\n" + eu,
       "namespaces[0].default_zone", "missing: the zone of groups that are not listed"},
      {N + entry("s", "x:{id}", "zone",
                 eu + "    groups:\n      t1: us\n      t1: eu  #<\n    default_zone: eu\n"),
       "namespaces[0].groups.t1", "group 't1' is listed twice"},
      {N + entry("s", "x:{id}", "zone",
                 "    zones:\n      eu: [a]\n      eu: [b]  #<\n    default_zone: eu\n"),
       "namespaces[0].zones.eu", "zone 'eu' is listed twice"},
      {N + entry("s", "x:{id}", "zone", eu + "    default_zone: mars  #<\n"),
       "namespaces[0].default_zone", "unknown zone 'mars'"},
      {N + entry("s", "x:{id}", "zone", eu + "    default_zone: eu\n    shards: [a]  #<\n"),
       "namespaces[0].shards", "is a setting of the hashed strategy, not of zone"},
      {N + entry("s", "x:{id}", "zone", eu + "    default_zone: eu\n    fallback: hashed  #<\n"),
       "namespaces[0].fallback", "is a setting of the directory strategy, not of zone"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("unreachable namespaces are errors; reachable ones after partial ranges are not") {
  const std::string total_range = "    ranges: [{shard: a, to: m}, {shard: b, from: m}]\n";
  const ErrorCase cases[] = {
      {N + entry("s", "x:{id}", "hashed") + "  - name: t\n    match: \"x:{id}\"  #<\n" +
           "    strategy: slots\n" + kFullSlots,
       "namespaces[1].match", "can never be reached: the same pattern as namespaces[0] (s)"},
      {N + entry("all", "{key}", "hashed") + "  - name: t\n    match: \"x:{id}\"  #<\n" +
           "    strategy: hashed\n",
       "namespaces[1].match",
       "can never be reached: namespaces[0] (all, match '{key}') comes first and matches every "
       "key this pattern matches"},
      {N + entry("s", "x:{id}", "hashed") + "  - name: t\n    match: \"x:{a}:{b}\"  #<\n" +
           "    strategy: hashed\n",
       "namespaces[1].match", "namespaces[0] (s, match 'x:{id}') comes first"},
      {N + entry("s", "x:{id}", "range", total_range) +
           "  - name: t\n    match: \"x:{a}:y\"  #<\n    strategy: hashed\n",
       "namespaces[1].match", "can never be reached"},
      {N + entry("s", "{a}:{b}", "hashed") + entry("t", "q-{id}", "hashed") +
           "  - name: u\n    match: \"{a}::{b}\"  #<\n    strategy: hashed\n",
       "namespaces[2].match", "namespaces[0] (s, match '{a}:{b}')"},
  };
  for (const auto& c : cases) check_error(c);

  // Not errors: a range that does not cover every shard key, a numeric range (non-numbers
  // pass on), a narrower pattern first.
  CHECK_NOTHROW(load_text(header() + N +
                          entry("s", "x:{id}", "range", "    ranges: [{shard: a, from: m}]\n") +
                          entry("t", "x:{id}", "hashed")));
  CHECK_NOTHROW(
      load_text(header() + N +
                entry("s", "x:{id}", "range", "    order: numeric\n    ranges: [{shard: a}]\n") +
                entry("t", "x:{id}", "hashed")));
  CHECK_NOTHROW(
      load_text(header() + N + entry("s", "x:{a}:{b}", "hashed") + entry("t", "x:{id}", "hashed")));
  CHECK_NOTHROW(
      load_text(header() + N + entry("s", "x:{a}:y", "hashed") + entry("t", "x:{id}", "hashed")));
}

TEST_CASE("a namespace's limits: requests_per_s and burst, the burst a second's worth by default") {
  Config c = load_text(
      header() + N + entry("batch", "batch:{id}", "hashed", "    limits: {requests_per_s: 7}\n") +
      entry("web", "web:{id}", "hashed", "    limits: {requests_per_s: 100, burst: 400}\n") +
      entry("free", "free:{id}", "hashed"));
  REQUIRE(c.namespaces.size() == 3);
  CHECK(c.namespaces[0].limits.requests_per_s == 7);
  CHECK(c.namespaces[0].limits.burst == 7);
  CHECK(c.namespaces[1].limits.burst == 400);
  CHECK_FALSE(c.namespaces[2].limits.any());
}
