// config/namespace/range_table.cpp: lexical and numeric range tables, and the ranges a shard
// key prefix can reach.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/namespace/range_table.h"
#include "tests/support/namespace_fixtures.h"

using namespace santral::config;
using namespace santral::config::fixtures;

TEST_CASE("lexical range tables: from inclusive, to exclusive, open ends, byte order") {
  RangeTable t(RangeOrder::Lexical,
               {{std::nullopt, "h", A}, {"h", "p", B}, {"p", "t", C}, {"t", std::nullopt, D}});
  CHECK(t.total());
  CHECK(t.find("") == 0u);
  CHECK(t.find("a") == 0u);
  CHECK(t.find("gzzzz") == 0u);
  CHECK(t.find("h") == 1u);
  CHECK(t.find("h\x01") == 1u);
  CHECK(t.find("ozz") == 1u);
  CHECK(t.find("p") == 2u);
  CHECK(t.find("t") == 3u);
  CHECK(t.find("\xff\xff") == 3u);
  CHECK(t.find("H") == 0u);  // byte order: uppercase sorts first
  CHECK(t.shard(2) == C);
  CHECK(t.label(0) == "[-inf, h)");
  CHECK(t.label(1) == "[h, p)");
  CHECK(t.label(3) == "[t, +inf)");

  RangeTable closed(RangeOrder::Lexical, {{"b", "d", A}, {"d", "f", B}});
  CHECK_FALSE(closed.total());
  CHECK_FALSE(closed.find("a"));
  CHECK_FALSE(closed.find(""));
  CHECK(closed.find("b") == 0u);
  CHECK(closed.find("czz") == 0u);
  CHECK(closed.find("d") == 1u);
  CHECK(closed.find("ezz") == 1u);
  CHECK_FALSE(closed.find("f"));
  CHECK_FALSE(closed.find("g"));
}

TEST_CASE("numeric range tables compare whole numbers and reject anything else") {
  RangeTable t(RangeOrder::Numeric,
               {{std::nullopt, "0", A}, {"0", "100", B}, {"100", std::nullopt, C}});
  CHECK_FALSE(t.total());  // non-numbers are never in a numeric table
  CHECK(t.numeric());
  CHECK(t.find("-5") == 0u);
  CHECK(t.find("-9223372036854775808") == 0u);
  CHECK(t.find("0") == 1u);
  CHECK(t.find("99") == 1u);
  CHECK(t.find("007") == 1u);  // 7, not the text "007"
  CHECK(t.find("100") == 2u);
  CHECK(t.find("20") == 1u);  // numerically, not as text ("20" > "100")
  CHECK(t.find("9223372036854775807") == 2u);
  CHECK_FALSE(t.find("9223372036854775808"));  // past int64
  CHECK_FALSE(t.find(""));
  CHECK_FALSE(t.find("abc"));
  CHECK_FALSE(t.find("1.5"));
  CHECK_FALSE(t.find(" 5"));
  CHECK_FALSE(t.find("5 "));
  CHECK_FALSE(t.find("-"));
  CHECK_FALSE(t.find("0x10"));

  RangeTable bounded(RangeOrder::Numeric, {{"10", "20", A}});
  CHECK_FALSE(bounded.find("9"));
  CHECK(bounded.find("10") == 0u);
  CHECK(bounded.find("19") == 0u);
  CHECK_FALSE(bounded.find("20"));
  CHECK(parse_int64("-42") == -42);
  CHECK_FALSE(parse_int64("+42"));
}

TEST_CASE("range tables name the ranges a shard key prefix can reach") {
  RangeTable t(RangeOrder::Lexical,
               {{std::nullopt, "h", A}, {"h", "p", B}, {"p", "t", C}, {"t", std::nullopt, D}});
  using V = std::vector<std::size_t>;
  CHECK(t.shards_for_prefix("") == V{A, B, C, D});
  CHECK(t.shards_for_prefix("a") == V{A});
  CHECK(t.shards_for_prefix("h") == V{B});
  CHECK(t.shards_for_prefix("o\xff") == V{B});
  CHECK(t.shards_for_prefix("zz") == V{D});
  CHECK(t.shards_for_prefix("\xff") == V{D});

  RangeTable n(RangeOrder::Numeric,
               {{std::nullopt, "0", A}, {"0", "100", B}, {"100", std::nullopt, C}});
  CHECK(n.shards_for_prefix("5") == V{B, C});  // 5, 50-59, 500-599, ...
  CHECK(n.shards_for_prefix("-") == V{A, B, C});
  CHECK(n.shards_for_prefix("-1") == V{A});
  CHECK(n.shards_for_prefix("0") == V{A, B, C});  // "007": not worth describing
  CHECK(n.shards_for_prefix("1a") == V{});        // no number starts with it
  CHECK(n.shards_for_prefix("") == V{A, B, C});
}

TEST_CASE("range prefix narrowing never misses the range of a key with that prefix") {
  std::mt19937_64 rng(7);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  RangeTable n(RangeOrder::Numeric, {{std::nullopt, "-1000", A},
                                     {"-1000", "0", B},
                                     {"0", "5000", C},
                                     {"5000", "9223372036854775800", A},
                                     {"9223372036854775800", std::nullopt, D}});
  RangeTable l(RangeOrder::Lexical, {{std::nullopt, "b", A},
                                     {"b", "b\xff", B},
                                     {"b\xff", "c", C},
                                     {"c", "m", D},
                                     {"m", std::nullopt, A}});
  std::vector<std::int64_t> numbers = {0,    1,   -1,  5000,    4999,    -1000,
                                       -999, max, min, max - 7, max - 8, min + 1};
  for (int i = 0; i < 3000; ++i) {
    int digits = std::uniform_int_distribution<int>(1, 19)(rng);
    std::int64_t magnitude = static_cast<std::int64_t>(rng() >> 1);
    std::int64_t cap = 1;
    for (int d = 1; d < digits && cap <= max / 10; ++d) cap *= 10;
    numbers.push_back((rng() & 1 ? -1 : 1) * (magnitude % cap));
  }
  for (auto number : numbers) {
    std::string text = std::to_string(number);
    auto range = n.find(text);
    REQUIRE(range);
    for (std::size_t len = 0; len <= text.size(); ++len) {
      INFO(text << " prefix " << text.substr(0, len));
      auto shards = n.shards_for_prefix(text.substr(0, len));
      REQUIRE(std::count(shards.begin(), shards.end(), n.shard(*range)) == 1);
    }
  }
  std::mt19937 text_rng(8);
  for (int i = 0; i < 5000; ++i) {
    std::string key = random_text(text_rng, std::string("abcmn\xff", 6), 5);
    auto range = l.find(key);
    REQUIRE(range);  // the lexical table is total
    for (std::size_t len = 0; len <= key.size(); ++len) {
      auto shards = l.shards_for_prefix(key.substr(0, len));
      REQUIRE(std::count(shards.begin(), shards.end(), l.shard(*range)) == 1);
    }
  }
}
