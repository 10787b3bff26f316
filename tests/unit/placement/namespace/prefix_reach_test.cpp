// placement/namespace/prefix_reach.cpp: what a glob's literal prefix says about a pattern's shard
// key, and KEYS / SCAN MATCH narrowing (ShardMap::shards_for_pattern) built on it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "config/namespace/key_pattern.h"
#include "placement/namespace/prefix_reach.h"
#include "tests/support/namespace_fixtures.h"

using namespace santral::config;
using namespace santral::placement;
using namespace santral::config::fixtures;

namespace {

// Harder shapes: ranges that do not cover every key (the rest falls through), a numeric table
// up to the int64 limit followed by the same pattern hashed, a trailing literal, a leading
// field, and a catch-all at the end.
const std::string kTricky = R"(namespaces:
  - name: window
    match: "log:{day}"
    shard_key: day
    strategy: range
    ranges:
      - {shard: a, from: "2026-01", to: "2026-06"}
      - {shard: b, from: "2026-06", to: "2027-01"}
  - name: numbers
    match: "n:{num}"
    shard_key: num
    strategy: range
    order: numeric
    ranges:
      - {shard: a, to: -100}
      - {shard: b, from: -100, to: 0}
      - {shard: c, from: 0, to: 9223372036854775800}
      - {shard: d, from: 9223372036854775800}
  - name: numbers-rest
    match: "n:{num}"
    strategy: hashed
    shards: [c]
  - name: profiles
    match: "user:{id}:profile"
    shard_key: id
    strategy: directory
    groups: {alice: a}
  - name: regional
    match: "{region}/{id}"
    shard_key: region
    strategy: zone
    zones: {eu: [a, b], us: [c, d]}
    groups: {fr: eu, ca: us}
    default_zone: us
  - name: docs
    match: "doc:{tenant}::{id}"
    shard_key: tenant
    strategy: range
    ranges: [{shard: a, to: "ab:"}, {shard: c, from: "ab:"}]
  - name: pairs
    match: "p:{x}::{y}"
    shard_key: y
    strategy: slots
    slots: [{shard: a, from: 0, to: 8000}, {shard: d, from: 8001, to: 16383}]
  - name: rest
    match: "{key}"
    strategy: hashed
    shards: [b, d]
)";

// Few namespaces, a catch-all on one shard: narrowing shows in shards_for_pattern's answer.
const std::string kNarrow = R"(namespaces:
  - name: docs
    match: "doc:{tenant}::{id}"
    strategy: range
    ranges: [{shard: a, to: "ab:"}, {shard: b, from: "ab:"}]
  - name: customers
    match: "c:{name}"
    strategy: range
    ranges:
      - {shard: a, to: "h"}
      - {shard: b, from: "h", to: "p"}
      - {shard: c, from: "p", to: "t"}
      - {shard: d, from: "t"}
  - name: rest
    match: "{key}"
    strategy: hashed
    shards: [c]
)";

// Keys shaped like every namespace of kNamespaces and kTricky (and none), with hash tags,
// separators and bytes that make fields end early or late.
std::string random_key(std::mt19937& rng) {
  static const std::vector<std::string> starts = {"session:",
                                                  "cart:",
                                                  "customer:",
                                                  "invoice:",
                                                  "order:",
                                                  "listing:",
                                                  "tenant:",
                                                  "log:2026-",
                                                  "n:",
                                                  "n:-",
                                                  "n:92233720368547758",
                                                  "user:",
                                                  "fr/",
                                                  "ca/",
                                                  "p:",
                                                  "",
                                                  "x",
                                                  "customer:{",
                                                  "order:seller42:",
                                                  "doc:ab",
                                                  "doc:",
                                                  "c:",
                                                  "c:h"};
  static const std::vector<std::string> tokens = {
      "a",       "h",       "p",       "t",          "z",         "0",    "1",
      "9",       "00",      ":",       "::",         "{",         "}",    "{}",
      "/",       "-",       "\xff",    "\x01",       "*",         "?",    "seller42",
      "seller7", "tenantA", "tenantB", ":profile",   "alice",     "12",   "06",
      "2026-",   "1000000", "{zed}",   "{seller42}", "{tenantB}", "-100", "9223372036854775",
      "ab:",     "ab"};
  std::string key = starts[rng() % starts.size()];
  for (int n = static_cast<int>(rng() % 6); n > 0; --n) key += tokens[rng() % tokens.size()];
  return key;
}

}  // namespace

TEST_CASE("shards_for_pattern never misses the shard of a key the glob matches") {
  struct Setup {
    std::string name, text;
    bool deterministic;
    std::size_t min_narrowed;  // about half of what this seed gives: not vacuous
  };
  const Setup setups[] = {
      {"namespaces, tag {}", header() + kNamespaces, true, 700},
      {"namespaces, no tag", header("") + kNamespaces, true, 900},
      {"namespaces, tag [], modula", header("[]", "modula") + kNamespaces, true, 250},
      {"namespaces, random", header("{}", "random") + kNamespaces, false, 300},
      {"tricky, tag {}", header() + kTricky, true, 450},
      {"tricky, no tag", header("") + kTricky, true, 1700},
      {"narrow, no tag", header("") + kNarrow, true, 1000},
      {"narrow, tag {}", header() + kNarrow, true, 1000},
      {"no namespaces", header(), true, 400},  // only globs that hold a whole tag narrow
  };
  for (const auto& setup : setups) {
    ShardMap map = map_of(setup.text);
    std::mt19937 rng(2026);
    std::size_t narrowed = 0;
    for (int i = 0; i < 20000; ++i) {
      std::string key = random_key(rng);
      std::string glob = key.substr(0, rng() % (key.size() + 1)) + "*";
      INFO(setup.name << ": key '" << key << "' glob '" << glob << "'");
      auto shards = map.shards_for_pattern(glob);
      REQUIRE(std::is_sorted(shards.begin(), shards.end()));
      REQUIRE(std::adjacent_find(shards.begin(), shards.end()) == shards.end());
      if (setup.deterministic) {
        REQUIRE(std::count(shards.begin(), shards.end(), map.shard_for_key(key)) == 1);
        // A glob without wildcards is one key: exactly its shard.
        if (key.find_first_of("*?[\\") == std::string::npos)
          REQUIRE(map.shards_for_pattern(key) == std::vector<std::size_t>{map.shard_for_key(key)});
      } else if (map.place(key).namespace_name.empty()) {
        REQUIRE(shards.size() == map.shard_count());
      } else {
        REQUIRE(std::count(shards.begin(), shards.end(), map.shard_for_key(key)) == 1);
      }
      narrowed += shards.size() < map.shard_count();
    }
    INFO(setup.name);
    CHECK(narrowed > setup.min_narrowed);
  }
}

TEST_CASE("what a glob's literal prefix says about a pattern's shard key") {
  std::string problem;
  auto order = KeyPattern::compile("order:{seller}:{id}", problem).value();
  auto r = reach(order, 0, "order:s1:");
  CHECK_FALSE(r.disjoint);
  CHECK(r.covers);
  CHECK(r.prefix_unmatched);  // "order:s1:" itself has an empty id
  CHECK(r.shard_key == "s1");
  r = reach(order, 0, "order:s1:9");
  CHECK(r.covers);
  CHECK_FALSE(r.prefix_unmatched);
  r = reach(order, 1, "order:s1:9");
  CHECK(r.shard_key_prefix == "9");
  r = reach(order, 0, "order:s1");
  CHECK_FALSE(r.covers);
  CHECK_FALSE(r.shard_key);
  CHECK(r.shard_key_prefix == "s1");
  r = reach(order, 0, "ord");
  CHECK_FALSE(r.disjoint);
  CHECK_FALSE(r.shard_key);
  CHECK_FALSE(r.shard_key_prefix);
  CHECK(reach(order, 0, "orx").disjoint);
  CHECK(reach(order, 0, "order:s1:").shard_key == "s1");

  // A two-byte literal after the shard key may begin on the prefix's last byte.
  auto doc = KeyPattern::compile("doc:{tenant}::{id}", problem).value();
  CHECK(reach(doc, 0, "doc:ab:").shard_key_prefix == "ab");
  CHECK(reach(doc, 0, "doc:ab::").shard_key == "ab");

  // A trailing literal is matched at the end of the key, which a prefix does not show.
  auto tail = KeyPattern::compile("user:{id}:profile", problem).value();
  r = reach(tail, 0, "user:al");
  CHECK_FALSE(r.disjoint);
  CHECK_FALSE(r.covers);
  CHECK_FALSE(r.shard_key);
  CHECK_FALSE(r.shard_key_prefix);

  auto literal = KeyPattern::compile("config", problem).value();
  CHECK(reach(literal, -1, "con").shard_key == "config");
  CHECK(reach(literal, -1, "cx").disjoint);
  CHECK(reach(literal, -1, "configs").disjoint);

  CHECK(glob_literal_prefix("a*b") == "a");
  CHECK(glob_literal_prefix("a?b") == "a");
  CHECK(glob_literal_prefix("a[bc]") == "a");
  CHECK(glob_literal_prefix("a\\*") == "a");
  CHECK(glob_literal_prefix("abc") == "abc");
  CHECK(glob_literal_prefix("*") == "");
}

TEST_CASE("shards_for_pattern narrows by range, group and tag") {
  using V = std::vector<std::size_t>;
  ShardMap map = map_of(header("") + kNamespaces);
  // Range namespaces: the ranges the literal prefix of the shard key can reach.
  CHECK(map.shards_for_pattern("customer:a*") == V{A});
  CHECK(map.shards_for_pattern("customer:h*") == V{B});
  CHECK(map.shards_for_pattern("customer:zo*") == V{D});
  CHECK(map.shards_for_pattern("customer:a?c") == V{A});
  CHECK(map.shards_for_pattern("customer:*") == V{A, B, C, D});
  // Directory: a pinned listed group is that group's shard, plus the shard of the one key the
  // glob matches outside the namespace ("order:seller42:" has an empty id).
  auto pinned = V{B, map.shard_for_key("order:seller42:")};
  std::sort(pinned.begin(), pinned.end());
  pinned.erase(std::unique(pinned.begin(), pinned.end()), pinned.end());
  CHECK(map.shards_for_pattern("order:seller42:*") == pinned);
  CHECK(map.shards_for_pattern("order:seller42:1*") == V{B});  // no key outside it
  CHECK(map.shards_for_pattern("order:seller7:9*") == V{A});
  // An unlisted group: its fallback shard.
  CHECK(map.shards_for_pattern("order:seller9:1*") == V{map.shard_for_key("order:seller9:1")});
  // Group not pinned: the namespace's shards (directory lists a, b; fallback c, d) and the
  // default placement of keys with an empty id or seller.
  CHECK(map.shards_for_pattern("order:sel*") == V{A, B, C, D});
  // Zone: a pinned group's keys are hashed over its zone: the zone's shards.
  CHECK(map.shards_for_pattern("tenant:tenantB:x*") == V{C, D});
  // Slots: a pinned shard key.
  CHECK(map.shards_for_pattern("cart:bob:*").size() <= 2);
  CHECK(map.shards_for_pattern("cart:bob:i*") == V{map.shard_for_key("cart:bob:i")});
  // Hashed over three shards: never d.
  CHECK(map.shards_for_pattern("session:a*") == V{A, B, C});

  // With a hash tag a key's tag can come from the part the glob leaves open, so a range
  // prefix no longer narrows within the namespace...
  ShardMap tagged = map_of(header() + kNamespaces);
  CHECK(tagged.shards_for_pattern("customer:a*") == V{A, B, C, D});
  CHECK(tagged.shards_for_pattern("session:a*") == V{A, B, C});
  // ...unless the prefix holds the whole tag: one shard.
  CHECK(tagged.shards_for_pattern("customer:a{zed}*") == V{D});
  CHECK(tagged.shards_for_pattern("order:x:{seller42}*") == V{B});
  CHECK(tagged.shards_for_pattern("other:{seller42}*") ==
        V{tagged.shard_for_key("other:{seller42}")});
  // An empty tag is no tag: narrowing works again.
  CHECK(tagged.shards_for_pattern("customer:a{}*") == V{A});

  // Numeric ranges, with the rest of the pattern's keys hashed onto c.
  ShardMap tricky = map_of(header("") + kTricky);
  CHECK(tricky.shards_for_pattern("n:-1*") == V{A, B, C});  // -1..-99 on b, below on a; rest c
  CHECK(tricky.shards_for_pattern("n:5*") == V{C});
  CHECK(tricky.shards_for_pattern("n:922337203685477580*") == V{C, D});
  // A partial lexical window, and "{region}/{id}" can still match "log:2026-03/x" (region
  // "log:2026-03", default_zone us): every shard.
  CHECK(tricky.shards_for_pattern("log:2026-03*") == V{A, B, C, D});
  // A trailing literal cannot be seen in a prefix: every shard the namespace can use (the
  // directory's hashed fallback defaults to all shards).
  CHECK(tricky.shards_for_pattern("user:alice*") == V{A, B, C, D});
  // The shard key ends where a two-byte literal begins, which may be the prefix's last byte:
  // tenant "ab" (doc:ab::1, on a) and tenant "ab:x" (doc:ab:x::1, on b) both start "doc:ab:".
  ShardMap narrow = map_of(header("") + kNarrow);
  CHECK(narrow.shards_for_pattern("doc:ab:*") == V{A, B, C});  // c: "rest" takes the others
  CHECK(narrow.shards_for_pattern("doc:ab::*") == V{A, C});
  CHECK(narrow.shards_for_pattern("doc:ab::1*") == V{A});
  CHECK(narrow.shards_for_pattern("c:alice*") == V{A});
  CHECK(narrow.shards_for_pattern("c:*") == V{A, B, C, D});
  // A leading field pinned by its literal: that group's zone.
  CHECK(tricky.shards_for_pattern("fr/x*") == V{A, B});
}
