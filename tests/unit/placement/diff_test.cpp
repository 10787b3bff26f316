// placement/diff.cpp: moving_units(from, to) finds every edit that gives some key
// another shard, whatever the edit is (the hash, the hash tag, a namespace's pattern, the
// namespaces' order, a shard key field), not only edits of the shard list or of a table; and
// an edit that places every key where it was moves nothing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config.h"
#include "placement/diff.h"
#include "placement/shard_map.h"

using namespace santral::config;
using namespace santral::placement;

namespace {

const std::string kThreeShards =
    "shards:\n"
    "  - {name: s0, address: 127.0.0.1:7001}\n"
    "  - {name: s1, address: 127.0.0.1:7002}\n"
    "  - {name: s2, address: 127.0.0.1:7003}\n";

ShardMap map_of(const std::string& text) {
  return ShardMap(parse_config(text, "santral.yaml"));
}

// The units, one line each, for the failure message.
std::string listed(const std::vector<MovingUnit>& units) {
  std::string text;
  for (const auto& u : units)
    text += u.placement + ": " + u.what + " from " + u.from + " to " + u.to + "\n";
  return text;
}

// How many of the keys <prefix>N<suffix>, N < 1000, the edit gives another shard: that it
// really moves keys, so that an empty unit list is wrong (and the case not a test of nothing).
int owners_changed(const ShardMap& from, const ShardMap& to, const std::string& prefix,
                   const std::string& suffix) {
  int changed = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string key = prefix + std::to_string(i) + suffix;
    if (from.shard(from.shard_for_key(key)).address.text() !=
        to.shard(to.shard_for_key(key)).address.text())
      ++changed;
  }
  return changed;
}

void check_moves(const std::string& before, const std::string& after, const std::string& prefix,
                 const std::string& suffix = "") {
  auto from = map_of(before);
  auto to = map_of(after);
  int changed = owners_changed(from, to, prefix, suffix);
  INFO(changed << " of 1000 keys like " << prefix << "N" << suffix << " change shard");
  REQUIRE(changed > 100);
  auto units = moving_units(from, to);
  INFO(listed(units));
  CHECK_FALSE(units.empty());
}

void check_moves_nothing(const std::string& before, const std::string& after) {
  auto units = moving_units(map_of(before), map_of(after));
  INFO(listed(units));
  CHECK(units.empty());
}

// Two namespaces both take keys like "7:x:y" (neither takes every key of the other, so either
// order is valid): `left` places them on s0 or s1, `right` on s1 or s2.
std::string two_namespaces(bool left_first) {
  std::string left =
      "  - name: left\n"
      "    match: \"{a}:x:{b}\"\n"
      "    strategy: hashed\n"
      "    shards: [s0, s1]\n";
  std::string right =
      "  - name: right\n"
      "    match: \"{c}:{d}:y\"\n"
      "    strategy: hashed\n"
      "    shards: [s1, s2]\n";
  return kThreeShards + "namespaces:\n" + (left_first ? left + right : right + left);
}

std::string orders(const std::string& match, const std::string& shard_key) {
  return kThreeShards +
         "namespaces:\n"
         "  - name: orders\n"
         "    match: \"" +
         match +
         "\"\n"
         "    shard_key: " +
         shard_key +
         "\n"
         "    strategy: hashed\n"
         "    shards: [s0]\n";
}

}  // namespace

TEST_CASE("an identical map moves nothing") {
  check_moves_nothing(kThreeShards, kThreeShards);
  check_moves_nothing(two_namespaces(true), two_namespaces(true));
}

TEST_CASE("an edit that places every key where it was moves nothing") {
  check_moves_nothing(kThreeShards, kThreeShards +
                                        "read_from: prefer-replica\n"
                                        "near_cache: {enabled: true}\n"
                                        "timeouts: {request_ms: 700}\n"
                                        "cross_shard_writes: allow\n");
  check_moves_nothing(two_namespaces(true), two_namespaces(true) + "near_cache: {enabled: true}\n");
  // A namespace's own non-placement settings.
  check_moves_nothing(orders("order:{seller}:{id}", "seller"),
                      orders("order:{seller}:{id}", "seller") + "    read_from: prefer-replica\n" +
                          "    near_cache: false\n");
}

TEST_CASE("a shard added to the ring moves keys") {
  check_moves(kThreeShards, kThreeShards + "  - {name: s3, address: 127.0.0.1:7004}\n", "key:");
}

TEST_CASE("another hash function moves keys") {
  check_moves(kThreeShards + "hash: murmur\n", kThreeShards + "hash: crc32a\n", "key:");
}

TEST_CASE("another hash tag moves keys") {
  // Keys with a [tag]: the default {} leaves them whole, [] places them by the tag.
  check_moves(kThreeShards, kThreeShards + "hash_tag: \"[]\"\n", "a[", "]c1");
  check_moves(kThreeShards + "hash_tag: \"[]\"\n", kThreeShards, "a[", "]c1");
}

TEST_CASE("a namespace pattern that no longer matches its keys moves them") {
  // user:N keys are the namespace's (all on s0); with the new pattern they fall to the default
  // placement, over every shard.
  auto users = [](const std::string& match) {
    return kThreeShards +
           "namespaces:\n"
           "  - name: users\n"
           "    match: \"" +
           match +
           "\"\n"
           "    strategy: hashed\n"
           "    shards: [s0]\n";
  };
  check_moves(users("user:{id}"), users("member:{id}"), "user:");
}

TEST_CASE("two namespaces swapped in order move the keys both match") {
  // The first match wins: "N:x:y" is left's in one order, right's in the other.
  check_moves(two_namespaces(true), two_namespaces(false), "", ":x:y");
}

TEST_CASE("another shard key field moves keys") {
  // Placed by the seller, then by the id: the orders of one seller spread out.
  auto spread = [](const std::string& shard_key) {
    return kThreeShards +
           "namespaces:\n"
           "  - name: orders\n"
           "    match: \"order:{seller}:{id}\"\n"
           "    shard_key: " +
           shard_key +
           "\n"
           "    strategy: hashed\n";
  };
  check_moves(spread("seller"), spread("id"), "order:seller42:");
}
