#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "router/merge/gathered/set_algebra.h"

using namespace santral::router;
using Views = std::vector<std::string_view>;

TEST_CASE("SINTER walks the smallest set, the first of equal ones") {
  std::vector<SetMembers> sets = {{"c", "b", "a", "x"}, {"b", "z", "c"}, {"a", "b", "c", "q"}};
  CHECK(set_inter(sets) == Views{"b", "c"});
  CHECK(set_inter_card(sets, 0) == 2);
  CHECK(set_inter_card(sets, 1) == 1);
  sets.push_back({});  // a missing key empties the result
  CHECK(set_inter(sets).empty());
}

TEST_CASE("SUNION and SDIFF answer an intset result in numeric order") {
  std::vector<SetMembers> ints = {{"10", "-2", "3"}, {"3", "2", "-20"}};
  CHECK(set_union(ints) == Views{"-20", "-2", "2", "3", "10"});
  CHECK(set_diff(ints) == Views{"-2", "10"});
  // "01" is not an integer to Redis: a hash table, first-met order.
  std::vector<SetMembers> mixed = {{"10", "01"}, {"3"}};
  CHECK(set_union(mixed) == Views{"10", "01", "3"});
}

TEST_CASE("SDIFF's second algorithm keeps a hash table when the first set is one") {
  std::vector<std::string> big;
  for (int i = 600; i >= 1; --i) big.push_back(std::to_string(i));  // 600 .. 1
  SetMembers first(big.begin(), big.end());
  SetMembers low(big.end() - 100, big.end());  // 100 .. 1
  std::vector<SetMembers> sets = {first, low};
  // Algorithm 1 (cost 600 * 2 / 2 = 600 against 700) adds only what survives: 500 integers,
  // an intset, sorted.
  auto diff = set_diff(sets);
  REQUIRE(diff.size() == 500);
  CHECK(diff.front() == "101");
  CHECK(diff.back() == "600");
  // Algorithm 2 (cost 1200 against 702) starts from all 600: a hash table, unsorted.
  sets.push_back({"x"});
  sets.push_back({"y"});
  diff = set_diff(sets);
  REQUIRE(diff.size() == 500);
  CHECK(diff.front() == "600");
}
