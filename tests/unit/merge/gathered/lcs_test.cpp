#include <catch2/catch.hpp>

#include "router/merge/gathered/lcs.h"

using santral::router::lcs;

TEST_CASE("LCS finds Redis's sequence and ranges (the examples of Redis's LCS page)") {
  auto result = lcs("ohmytext", "mynewtext", true, 0);
  CHECK(result.sequence == "mytext");
  CHECK(result.length == 6);
  // The walk goes backwards: the last match first.
  REQUIRE(result.matches.size() == 2);
  CHECK(result.matches[0].a_start == 4);
  CHECK(result.matches[0].a_end == 7);
  CHECK(result.matches[0].b_start == 5);
  CHECK(result.matches[0].b_end == 8);
  CHECK(result.matches[0].length == 4);
  CHECK(result.matches[1].a_start == 2);
  CHECK(result.matches[1].a_end == 3);
  CHECK(result.matches[1].b_start == 0);
  CHECK(result.matches[1].b_end == 1);

  auto filtered = lcs("ohmytext", "mynewtext", true, 4);
  REQUIRE(filtered.matches.size() == 1);
  CHECK(filtered.matches[0].length == 4);
}

TEST_CASE("LCS of empty strings and without a walk") {
  CHECK(lcs("", "abc", true, 0).sequence.empty());
  CHECK(lcs("abc", "", true, 0).matches.empty());
  auto length_only = lcs("abcbdab", "bdcaba", false, 0);
  CHECK(length_only.length == 4);
  CHECK(length_only.sequence.empty());
  // Ties step back in the second string: Redis's "bcba"-style choice.
  CHECK(lcs("abcbdab", "bdcaba", true, 0).sequence == "bdab");
}

TEST_CASE("LCS refuses a table larger than Redis's proto-max-bulk-len") {
  std::string a(20000, 'a');
  std::string b(20000, 'b');
  CHECK_FALSE(santral::router::lcs_table_fits(a, b));
  CHECK(santral::router::lcs_table_fits(a, "abc"));
}
