// placement/namespace/namespace.cpp: placement per strategy (hashed, range, directory, zone)
// through a ShardMap built from YAML, hash tags inside a namespace, keys of no namespace,
// describe() and read_from and write_concern per namespace.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "placement/namespace/key_slot.h"
#include "tests/support/namespace_fixtures.h"

using namespace santral::config;
using namespace santral::placement;
using namespace santral::config::fixtures;

TEST_CASE("the shard key defaults to the first field; a pattern without fields, the whole key") {
  ShardMap map = map_of(header() + N + entry("o", "order:{customer}:{id}", "hashed") +
                        entry("one", "config", "hashed"));
  CHECK(map.place("order:c1:17").shard_key == "c1");
  CHECK(map.shard_for_key("order:c1:17") == map.shard_for_key("order:c1:18"));
  CHECK(map.place("config").shard_key == "config");
  CHECK(map.place("config").namespace_name == "one");
}

TEST_CASE("hashed: keys spread over the listed shards and no others") {
  ShardMap map = map_of(header() + kNamespaces);
  std::map<std::size_t, int> counts;
  for (int i = 0; i < 6000; ++i) {
    std::string key = "session:" + std::to_string(i);
    auto p = map.place(key);
    REQUIRE(p.namespace_name == "sessions");
    REQUIRE(p.strategy == "hashed");
    REQUIRE(p.shard_key == std::to_string(i));  // no shard_key: the first field
    REQUIRE(p.shard == map.shard_for_key(key));
    ++counts[p.shard];
  }
  CHECK(counts.count(D) == 0);
  REQUIRE(counts.size() == 3);
  // c has weight 2: about half of the keys.
  CHECK(counts[C] > 2400);
  CHECK(counts[C] < 3600);
  CHECK(counts[A] > 900);
  CHECK(counts[B] > 900);
}

TEST_CASE("range: each shard key goes to the range holding it") {
  ShardMap map = map_of(header() + kNamespaces);
  const std::pair<std::string, std::size_t> lexical[] = {
      {"alice", A}, {"gzz", A}, {"h", B}, {"harry", B}, {"ozzy", B}, {"p", C},
      {"paul", C},  {"s", C},   {"t", D}, {"tom", D},   {"zoe", D},  {"Zed", A},
  };
  for (const auto& [name, shard] : lexical) {
    INFO(name);
    auto p = map.place("customer:" + name);
    CHECK(p.namespace_name == "customers");
    CHECK(p.strategy == "range");
    CHECK(p.shard_key == name);
    CHECK(p.shard == shard);
  }
  CHECK(map.place("customer:harry").detail == "range [h, p)");
  CHECK(map.place("customer:alice").detail == "range [-inf, h)");

  const std::pair<std::string, std::size_t> numeric[] = {
      {"-5", A},      {"0", A},       {"999999", A}, {"1000000", B},
      {"1999999", B}, {"2000000", D}, {"20", A},     {"9223372036854775807", D},
  };
  for (const auto& [number, shard] : numeric) {
    INFO(number);
    auto p = map.place("invoice:" + number + ":1");
    CHECK(p.namespace_name == "invoices");
    CHECK(p.shard_key == number);
    CHECK(p.shard == shard);
  }
  // Not a number: not in the namespace, so the default placement decides.
  ShardMap plain = map_of(header());
  for (std::string key : {"invoice:abc:1", "invoice:1.5:1", "invoice:99999999999999999999:1"}) {
    INFO(key);
    CHECK(map.place(key).namespace_name.empty());
    CHECK(map.shard_for_key(key) == plain.shard_for_key(key));
  }
}

TEST_CASE("directory: listed groups go to their shard, others to the fallback") {
  ShardMap map = map_of(header() + kNamespaces);
  for (int i = 0; i < 200; ++i) {
    std::string id = std::to_string(i);
    REQUIRE(map.shard_for_key("order:seller42:" + id) == B);
    REQUIRE(map.shard_for_key("order:seller7:" + id) == A);
    REQUIRE(map.shard_for_key("listing:seller42:" + id) == D);
  }
  CHECK(map.place("order:seller42:1").detail == "group seller42 -> listed");
  CHECK(map.place("order:seller9:1").detail == "group seller9 -> fallback hashed");
  std::map<std::size_t, int> hashed, slots;
  for (int s = 0; s < 3000; ++s) {
    std::string seller = "seller" + std::to_string(1000 + s);
    auto p = map.place("order:" + seller + ":1");
    REQUIRE(p.namespace_name == "orders");
    REQUIRE(p.strategy == "directory");
    REQUIRE(p.shard_key == seller);
    // Every key of a group is on one shard.
    REQUIRE(map.shard_for_key("order:" + seller + ":2") == p.shard);
    ++hashed[p.shard];
    auto slot = key_slot(seller);
    auto l = map.place("listing:" + seller + ":1");
    REQUIRE(l.shard == (slot <= 9999 ? A : B));
    REQUIRE(l.detail == "group " + seller + " -> fallback slots, slot " + std::to_string(slot));
    ++slots[l.shard];
  }
  // The hashed fallback uses only its own shards, c and d.
  CHECK(hashed.size() == 2);
  CHECK(hashed.count(C) == 1);
  CHECK(hashed.count(D) == 1);
  CHECK(slots.size() == 2);
}

TEST_CASE("zone: a group's zone, hashed within the zone's shards; others in default_zone") {
  ShardMap map = map_of(header() + kNamespaces);
  auto a = map.place("tenant:tenantA:k");
  CHECK(a.namespace_name == "tenants");
  CHECK(a.detail == "zone eu");
  CHECK((a.shard == A || a.shard == B));
  auto b = map.place("tenant:tenantB:k");
  CHECK(b.detail == "zone us");
  CHECK((b.shard == C || b.shard == D));
  // Each key is hashed within its zone: one tenant's keys spread over the zone's shards.
  std::set<std::size_t> a_shards, b_shards;
  for (int i = 0; i < 100; ++i) {
    a_shards.insert(map.shard_for_key("tenant:tenantA:" + std::to_string(i)));
    b_shards.insert(map.shard_for_key("tenant:tenantB:" + std::to_string(i)));
  }
  CHECK(a_shards == std::set<std::size_t>{A, B});
  CHECK(b_shards == std::set<std::size_t>{C, D});
  // A hash tag keeps keys together inside the zone.
  std::set<std::size_t> tagged;
  for (int i = 0; i < 50; ++i)
    tagged.insert(map.shard_for_key("tenant:tenantA:{t1}" + std::to_string(i)));
  CHECK(tagged.size() == 1);
  std::map<std::size_t, int> unlisted;
  for (int t = 0; t < 2000; ++t) {
    std::string tenant = "t" + std::to_string(t);
    auto p = map.place("tenant:" + tenant + ":k");
    REQUIRE(p.shard_key == tenant);
    REQUIRE(p.detail.starts_with("zone eu (default_zone"));
    ++unlisted[p.shard];
  }
  CHECK(unlisted.size() == 2);  // both eu shards, never us
  CHECK(unlisted.count(A) == 1);
  CHECK(unlisted.count(B) == 1);
}

TEST_CASE("a hash tag wins over the shard key field, within the namespace") {
  ShardMap map = map_of(header() + kNamespaces);
  // The tag text is placed instead of the field: orders of seller42 with tag {x} leave b.
  auto p = map.place("order:seller42:{elsewhere}");
  CHECK(p.namespace_name == "orders");
  CHECK(p.shard_key == "elsewhere");
  CHECK(p.detail == "group elsewhere -> fallback hashed");
  CHECK((p.shard == C || p.shard == D));
  // A tag naming a listed group goes to that group's shard.
  CHECK(map.shard_for_key("order:any:{seller42}") == B);
  CHECK(map.shard_for_key("order:{seller7}:1") == A);
  // Slots: the tag's slot, as Redis Cluster.
  auto c = map.place("cart:u1:{shared}");
  CHECK(c.shard_key == "shared");
  CHECK(c.detail == "slot " + std::to_string(key_slot("shared")));
  // Range: the tag is looked up in the table.
  CHECK(map.shard_for_key("customer:alice{zed}") == D);
  CHECK(map.shard_for_key("customer:{zed}") == D);
  // An empty tag is no tag.
  CHECK(map.place("customer:alice{}").shard_key == "alice{}");
  CHECK(map.shard_for_key("customer:alice{}") == A);
  // Without a hash tag setting, braces are ordinary bytes.
  ShardMap untagged = map_of(header("") + kNamespaces);
  CHECK(untagged.place("order:seller42:{elsewhere}").shard_key == "seller42");
  CHECK(untagged.shard_for_key("order:seller42:{elsewhere}") == B);
}

TEST_CASE("keys of no namespace are placed exactly as without namespaces") {
  for (std::string distribution : {"ketama", "modula"}) {
    for (std::string tag : {"{}", ""}) {
      ShardMap with = map_of(header(tag, distribution) + kNamespaces);
      ShardMap without = map_of(header(tag, distribution));
      std::mt19937 rng(11);
      int compared = 0;
      std::set<std::size_t> used;
      for (int i = 0; i < 5000; ++i) {
        std::string key = random_text(rng, "abcdefgorsx:{}0123456789", 14);
        if (i % 5 == 0) key = "customer:";               // empty field: matches no namespace
        if (i % 5 == 1) key = "invoice:x" + key + ":1";  // not a number
        if (i % 5 == 2) key = "order:" + key;
        if (!with.place(key).namespace_name.empty()) continue;
        INFO(distribution << " tag '" << tag << "' key " << key);
        REQUIRE(with.shard_for_key(key) == without.shard_for_key(key));
        auto p = with.place(key);
        auto q = without.place(key);
        REQUIRE(p.shard == q.shard);
        REQUIRE(p.strategy == distribution);
        REQUIRE(p.shard_key == q.shard_key);
        REQUIRE(p.detail == q.detail);
        used.insert(p.shard);
        ++compared;
      }
      CHECK(compared > 2500);
      CHECK(used.size() == 4);
    }
  }
}

TEST_CASE("moving one directory group moves that group's keys and nothing else") {
  std::string before = header() + kNamespaces;
  std::string after = before;
  auto at = after.find("      seller42: b\n");
  REQUIRE(at != std::string::npos);
  after.replace(at, 18, "      seller42: d\n");
  ShardMap old_map = map_of(before);
  ShardMap new_map = map_of(after);

  std::mt19937 rng(99);
  const std::vector<std::string> prefixes = {
      "order:", "listing:", "tenant:", "session:", "cart:", "customer:", "invoice:", "other:"};
  const std::vector<std::string> groups = {"seller42", "seller7", "seller1", "tenantA", "7"};
  int moved = 0, stayed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string key = prefixes[rng() % prefixes.size()] + groups[rng() % groups.size()] + ":" +
                      random_text(rng, "abc{}42", 6, 1);
    auto p = old_map.place(key);
    auto q = new_map.place(key);
    INFO(key);
    bool in_group = p.namespace_name == "orders" && p.shard_key == "seller42";
    if (in_group) {
      REQUIRE(p.shard == B);
      REQUIRE(q.shard == D);
      ++moved;
    } else {
      REQUIRE(q.shard == p.shard);
      REQUIRE(q.namespace_name == p.namespace_name);
      ++stayed;
    }
  }
  CHECK(moved > 100);
  CHECK(stayed > 10000);
}

TEST_CASE("describe lists the default placement and every namespace's table") {
  ShardMap map = map_of(header() + kNamespaces);
  std::string text = map.describe();
  INFO(text);
  for (std::string line : {
           "default placement: ketama over a, b, c, d (hash murmur, hash tag {})",
           "namespaces: 7, tried in order",
           "namespace sessions: match session:{id}, shard key {id}, strategy hashed",
           "hashed (murmur, 200 points per unit of weight) over a, b, c",
           "slots 4096-8191 -> b",
           "namespace customers: match customer:{name}, shard key {name}, strategy range (byte "
           "order)",
           "range [h, p) -> b",
           "(numeric order)",
           "range [2000000, +inf) -> d",
           "group seller42 -> b",
           "other groups: fallback hashed (murmur, 160 points per unit of weight) over c, d",
           "other groups: fallback slots",
           "    slots 10000-16383 -> b",
           "zone eu: a, b (default_zone)",
           "zone us: c, d\n",
           "group tenantB -> zone us",
       })
    CHECK_THAT(text, Catch::Contains(line));
  CHECK_THAT(map_of(header()).describe(), Catch::Contains("namespaces: none"));
}

TEST_CASE("read_from per namespace: for its keys only; a bad value names the key") {
  ShardMap map =
      map_of(header() + N + entry("p", "profile:{id}", "hashed", "    read_from: replica\n") +
             entry("s", "session:{id}", "hashed"));
  CHECK(map.read_from_of("profile:1") == santral::config::ReadFrom::Replica);
  CHECK_FALSE(map.read_from_of("session:1").has_value());  // the config's read_from
  CHECK_FALSE(map.read_from_of("other").has_value());
  CHECK_THAT(map.describe(), Catch::Contains("read_from: replica"));
  CHECK_FALSE(map_of(header() + N + entry("s", "session:{id}", "hashed"))
                  .read_from_of("session:1")
                  .has_value());
  check_error({N + entry("p", "profile:{id}", "hashed", "    read_from: nowhere  #<\n"),
               "namespaces[0].read_from", "expected primary, prefer-replica or replica"});
}

TEST_CASE("a namespace may set its own write_concern") {
  auto config = parse_config(
      header() + N +
          entry("o", "order:{id}", "hashed", "    write_concern: {replicas: 2, timeout_ms: 50}\n") +
          entry("s", "session:{id}", "hashed"),
      "santral.yaml");
  REQUIRE(config.namespaces[0].write_concern.has_value());
  CHECK(config.namespaces[0].write_concern->replicas == 2);
  CHECK(config.namespaces[0].write_concern->timeout.count() == 50);
  CHECK_FALSE(config.namespaces[1].write_concern.has_value());
  CHECK(config.confirms_writes());
  CHECK_FALSE(parse_config(header() + N + entry("s", "session:{id}", "hashed"), "santral.yaml")
                  .confirms_writes());
  check_error({N + entry("o", "order:{id}", "hashed", "    write_concern: {replicas: -1}  #<\n"),
               "namespaces[0].write_concern.replicas", "out of range"});
}
