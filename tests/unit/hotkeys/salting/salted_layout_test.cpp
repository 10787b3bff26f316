#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "config/config.h"
#include "placement/shard_map.h"
#include "protocol/reply_value.h"
#include "router/hotkeys/salting/counter_sum.h"
#include "router/hotkeys/salting/salted_layout.h"

using namespace santral;
using namespace santral::router;

namespace {

config::Config shards(std::size_t count) {
  std::string text = "shards:\n";
  for (std::size_t i = 0; i < count; ++i)
    text += "  - name: s" + std::to_string(i) +
            "\n    address: 127.0.0.1:" + std::to_string(7000 + i) + "\n";
  return config::parse_config(text, "test.yaml");
}

std::size_t distinct(const SaltedCounter& counter) {
  return std::set<std::size_t>(counter.shards.begin(), counter.shards.end()).size();
}

protocol::ReplyValue bulk(std::string_view text) {
  protocol::ReplyValue value;
  value.type = protocol::ReplyValue::Type::BulkString;
  value.text = text;
  return value;
}

}  // namespace

TEST_CASE("sub-keys land on distinct shards where there are enough shards") {
  placement::ShardMap map(shards(8));
  for (std::string key : {"likes:500", "a", "post:{42}:likes", "{user}"}) {
    INFO(key);
    for (std::uint32_t salts : {2u, 4u, 8u}) {
      auto counter = lay_out_counter(key, salts, config::SaltReply::Estimate, map);
      REQUIRE(counter.sub_keys.size() == salts);
      CHECK(counter.sub_keys[0] == key);
      CHECK(distinct(counter) == salts);
      for (std::size_t i = 0; i < salts; ++i)
        CHECK(counter.shards[i] == map.shard_for_key(counter.sub_keys[i]));
      CHECK(std::set<std::string>(counter.sub_keys.begin(), counter.sub_keys.end()).size() ==
            salts);
    }
  }
  // A hash tag is salted inside the tag, so the sub-keys do not share its shard.
  auto tagged = lay_out_counter("post:{42}:likes", 4, config::SaltReply::Estimate, map);
  CHECK(tagged.sub_keys[1].find("post:{42:s") == 0);
}

TEST_CASE("more salts than shards: every shard used, names still unique") {
  placement::ShardMap map(shards(3));
  auto counter = lay_out_counter("likes:500", 7, config::SaltReply::Exact, map);
  REQUIRE(counter.sub_keys.size() == 7);
  CHECK(distinct(counter) == 3);
  CHECK(std::set<std::string>(counter.sub_keys.begin(), counter.sub_keys.end()).size() == 7);
  // Deterministic: every worker picks the same names.
  CHECK(lay_out_counter("likes:500", 7, config::SaltReply::Exact, map).sub_keys ==
        counter.sub_keys);
}

TEST_CASE("more salts than shards are spread evenly: no shard takes one more before all have") {
  for (std::size_t shard_count : {2u, 3u, 4u, 5u}) {
    placement::ShardMap map(shards(shard_count));
    for (std::uint32_t salts : {5u, 7u, 8u, 12u, 16u}) {
      for (int k = 0; k < 50; ++k) {
        std::string key = "likes:" + std::to_string(k);
        INFO(shard_count << " shards, " << salts << " salts, " << key);
        auto counter = lay_out_counter(key, salts, config::SaltReply::Estimate, map);
        REQUIRE(counter.sub_keys.size() == salts);
        std::vector<std::size_t> per_shard(shard_count, 0);
        for (auto shard : counter.shards) ++per_shard[shard];
        auto [low, high] = std::minmax_element(per_shard.begin(), per_shard.end());
        CHECK(*high - *low <= 1);
        CHECK(std::set<std::string>(counter.sub_keys.begin(), counter.sub_keys.end()).size() ==
              salts);
      }
    }
  }
}

TEST_CASE("a counter's parts add up as Redis reads numbers") {
  CounterSum sum;
  CHECK(sum.missing());
  protocol::ReplyValue nil;
  CHECK(sum.add(nil) == CounterSum::Status::Ok);
  CHECK(sum.missing());
  CHECK(sum.add(bulk("40")) == CounterSum::Status::Ok);
  protocol::ReplyValue two;
  two.type = protocol::ReplyValue::Type::Integer;
  two.integer = 2;
  CHECK(sum.add(two) == CounterSum::Status::Ok);
  CHECK(sum.integral());
  CHECK(sum.text() == "42");
  CHECK(sum.scale(3) == CounterSum::Status::Ok);
  CHECK(sum.integer() == 126);
  CHECK(sum.add(bulk("0.5")) == CounterSum::Status::Ok);
  CHECK_FALSE(sum.integral());
  CHECK(sum.text() == "126.5");
  CHECK(sum.add(bulk("many")) == CounterSum::Status::NotNumber);

  CounterSum big;
  CHECK(big.add(bulk("9223372036854775807")) == CounterSum::Status::Ok);
  CHECK(big.add(bulk("1")) == CounterSum::Status::Overflow);
}
