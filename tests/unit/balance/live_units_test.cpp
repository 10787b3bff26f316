#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/balance/proposer.h"
#include "config/config.h"
#include "placement/shard_map.h"
#include "router/balance/balance_proposal.h"
#include "router/balance/live_units.h"

using namespace santral;
using namespace santral::router;

namespace {

const std::string kSlotsConfig =
    "listen: 127.0.0.1:6380\n"
    "# the operator's comment\n"
    "shards:\n"
    "  - {name: s0, address: 127.0.0.1:7000}\n"
    "  - {name: s1, address: 127.0.0.1:7001}\n"
    "namespaces:\n"
    "  - name: users\n"
    "    match: \"user:{id}\"\n"
    "    shard_key: id\n"
    "    strategy: slots\n"
    "    slots:\n"
    "      - {shard: s0, from: 0, to: 16382}\n"
    "      - {shard: s1, from: 16383, to: 16383}\n";

// A shard's sample: `draws` keys user:<n> standing for `keys` keys of 100 bytes each.
ShardMeasure sample_of(std::size_t shard, int first, int draws, std::uint64_t keys, double ops) {
  ShardMeasure measure;
  measure.sample.shard = shard;
  measure.sample.answered = true;
  measure.sample.keys = keys;
  for (int i = 0; i < draws; ++i)
    measure.sample.draws.push_back({"user:" + std::to_string(first + i), 100});
  measure.ops_per_sec = ops;
  return measure;
}

}  // namespace

TEST_CASE("a slot range holding every key is cut at sampled medians and a part moves") {
  auto config = config::parse_config(kSlotsConfig, "test.yaml");
  placement::ShardMap map(config);
  std::vector<ShardMeasure> shards = {sample_of(0, 0, 400, 40000, 0), sample_of(1, 0, 0, 0, 0)};
  auto units = live_units(config, map, shards, {}, BalanceMetric::Keys);
  // users slots 0-16382 (all of s0's keys), with children cut at the median slot.
  REQUIRE(units.units.size() == 1);
  const auto& unit = units.units[0];
  CHECK(unit.name == "users slots 0-16382");
  CHECK(unit.keys == 40000);
  CHECK(unit.bytes == 4000000);
  REQUIRE(unit.children.size() == 2);
  CHECK(unit.children[0].load + unit.children[1].load == Approx(unit.load));
  CHECK(unit.children[0].load == Approx(20000).epsilon(0.01));
  REQUIRE(units.refs.contains(unit.children[1].name));

  auto proposal = balance::propose_balance(units.units, {2, 1.2});
  REQUIRE(proposal.error.empty());
  CHECK(proposal.target_met);
  REQUIRE_FALSE(proposal.moves.empty());
  CHECK(proposal.moves[0].to == 1);

  auto proposed = proposed_namespaces(config, proposal, units);
  REQUIRE(proposed.size() == 1);
  const auto& slots = proposed[0].table.slots;
  CHECK(slots.size() > 2);
  // Still a whole table: contiguous from 0 to 16383, and some of s0's slots now on s1.
  std::uint32_t next = 0;
  std::uint32_t on_s1 = 0;
  for (const auto& r : slots) {
    CHECK(r.from == next);
    next = r.to + 1;
    if (r.shard == 1) on_s1 += r.to - r.from + 1;
  }
  CHECK(next == 16384);
  CHECK(on_s1 > 1000);

  // The proposed file loads, and places keys as the table says.
  auto text = proposed_config_text(kSlotsConfig, config, proposed);
  INFO(text);
  auto again = config::parse_config(text, "proposed.yaml");
  REQUIRE(again.namespaces.size() == 1);
  CHECK(again.namespaces[0].slots.size() == slots.size());
  CHECK(again.listen.port == 6380);
  placement::ShardMap after(again);
  std::size_t moved = 0;
  for (int i = 0; i < 400; ++i)
    if (after.shard_for_key("user:" + std::to_string(i)) == 1) ++moved;
  CHECK(moved > 100);
}

TEST_CASE("hot keys put their own load on their unit; the rest of a shard's is spread") {
  auto config = config::parse_config(kSlotsConfig, "test.yaml");
  placement::ShardMap map(config);
  std::vector<ShardMeasure> shards = {sample_of(0, 0, 100, 100, 1000)};
  std::vector<HotKeyMeasure> hot = {{"user:5", 600}};
  auto units = live_units(config, map, shards, hot, BalanceMetric::Ops);
  REQUIRE(units.units.size() == 1);
  CHECK(units.units[0].load == Approx(1000));
  CHECK(units.ops_total == Approx(1000));
  // The child holding user:5 carries its 600 plus its share of the other 400.
  const auto& children = units.units[0].children;
  REQUIRE(children.size() == 2);
  double heavier = std::max(children[0].load, children[1].load);
  CHECK(heavier > 600 + 400 * 0.4);
}

TEST_CASE("what hashes place is pinned to its shard") {
  auto config = config::parse_config(
      "shards:\n  - {name: s0, address: 127.0.0.1:7000}\n  - {name: s1, address: 127.0.0.1:7001}\n",
      "ring.yaml");
  placement::ShardMap map(config);
  std::vector<ShardMeasure> shards;
  for (std::size_t s = 0; s < 2; ++s) {
    ShardMeasure m;
    m.sample.shard = s;
    m.sample.answered = true;
    m.sample.keys = 10;
    for (int i = 0; m.sample.draws.size() < 10; ++i)
      if (map.shard_for_key("k" + std::to_string(i)) == s)
        m.sample.draws.push_back({"k" + std::to_string(i), 10});
    m.ops_per_sec = s == 0 ? 900 : 100;
    shards.push_back(m);
  }
  auto units = live_units(config, map, shards, {}, BalanceMetric::Ops);
  REQUIRE(units.units.size() == 2);
  for (const auto& unit : units.units) CHECK(unit.pinned);
  CHECK(units.refs.empty());
  auto proposal = balance::propose_balance(units.units, {2, 1.2});
  CHECK(proposal.moves.empty());
  CHECK_FALSE(proposal.target_met);
  REQUIRE(proposal.jumbos.size() == 1);
  CHECK(proposal.jumbos[0].unit == "default ring on s0");
}
