// placement/move_scope.cpp: the placements a move cannot touch. A key of a settled placement is
// never looked up on the map the data leaves; the test checks the flags, and that skipping the
// lookup never changes where a key is looked for (every key of every placement, both ways).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "config/config.h"
#include "placement/move_scope.h"
#include "placement/shard_map.h"

using namespace santral::config;
using namespace santral::placement;

namespace {

const std::string kShards =
    "shards:\n"
    "  - {name: a, address: 127.0.0.1:7001}\n"
    "  - {name: b, address: 127.0.0.1:7002}\n";

std::string config_text(const std::string& slots, const std::string& shards = kShards,
                        const std::string& more = "") {
  return more + shards +
         "namespaces:\n"
         "  - name: users\n"
         "    match: 'user:{id}'\n"
         "    strategy: hashed\n"
         "  - name: orders\n"
         "    match: 'order:{id}'\n"
         "    strategy: slots\n"
         "    slots: " +
         slots + "\n";
}

const std::string kHalves = "[{shard: a, from: 0, to: 8191}, {shard: b, from: 8192, to: 16383}]";
const std::string kQuarter = "[{shard: a, from: 0, to: 4095}, {shard: b, from: 4096, to: 16383}]";

struct TwoMaps {
  TwoMaps(const std::string& from_text, const std::string& to_text)
      : from(std::make_shared<const ShardMap>(parse_config(from_text, "from.yaml"))),
        to(parse_config(to_text, "to.yaml")) {
    move.from = from;
    for (std::size_t s = 0; s < from->shard_count(); ++s) move.from_shard.push_back(s);
    settle_unmoved(move, to);
  }
  // Skipping a settled placement's lookup gives what the full lookup gives, for every key.
  void check_same_sources() const {
    for (const std::string prefix : {"user:", "order:", "other:"}) {
      for (int i = 0; i < 2000; ++i) {
        auto key = prefix + std::to_string(i);
        auto owner = to.owner(key);
        INFO(key);
        CHECK(move.source_of(key, owner) == move.source_of(key, owner.shard));
      }
    }
  }
  bool settled(const std::string& name) const {
    for (const auto& ns : to.namespaces())
      if (ns.name() == name) return move.settled_placement(&ns);
    FAIL("no namespace " << name);
    return false;
  }

  std::shared_ptr<const ShardMap> from;
  ShardMap to;
  Move move;
};

}  // namespace

TEST_CASE("a move of one namespace's slots settles the other namespaces and the default ring") {
  TwoMaps maps(config_text(kHalves), config_text(kQuarter));
  CHECK(maps.settled("users"));
  CHECK_FALSE(maps.settled("orders"));
  CHECK(maps.move.settled_placement(nullptr));  // the default placement
  maps.check_same_sources();
  // And the keys of the namespace that moves are still looked for where they were.
  int moving = 0;
  for (int i = 0; i < 2000; ++i) {
    auto key = "order:" + std::to_string(i);
    if (maps.move.source_of(key, maps.to.owner(key))) ++moving;
  }
  CHECK(moving > 0);
}

TEST_CASE("a shard added: every placement over it moves, none is settled by mistake") {
  const std::string three = kShards + "  - {name: c, address: 127.0.0.1:7003}\n";
  TwoMaps maps(config_text(kHalves), config_text(kHalves, three));
  CHECK_FALSE(maps.settled("users"));  // hashed over every shard
  CHECK(maps.settled("orders"));       // its slots name a and b only
  CHECK_FALSE(maps.move.settled_placement(nullptr));
  maps.check_same_sources();
}

TEST_CASE("a change of how keys become shards settles nothing") {
  TwoMaps tag(config_text(kHalves), config_text(kHalves, kShards, "hash_tag: '[]'\n"));
  CHECK_FALSE(tag.settled("users"));
  CHECK_FALSE(tag.settled("orders"));
  CHECK_FALSE(tag.move.settled_placement(nullptr));
  tag.check_same_sources();

  const std::string moved_b =
      "shards:\n"
      "  - {name: a, address: 127.0.0.1:7001}\n"
      "  - {name: b, address: 127.0.0.1:7009}\n";
  TwoMaps address(config_text(kHalves), config_text(kHalves, moved_b));
  CHECK_FALSE(address.settled("users"));
  CHECK_FALSE(address.settled("orders"));
  CHECK_FALSE(address.move.settled_placement(nullptr));
}
