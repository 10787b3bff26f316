#include <catch2/catch.hpp>

#include <string>

#include "protocol/glob_pattern.h"

using santral::protocol::glob_matches;

TEST_CASE("glob: stars and question marks, as Redis's stringmatchlen") {
  CHECK_FALSE(glob_matches("*", ""));  // as Redis 7.0: the loop never starts on empty text
  CHECK(glob_matches("*", "anything"));
  CHECK(glob_matches("user:*", "user:42"));
  CHECK_FALSE(glob_matches("user:*", "users:42"));
  CHECK(glob_matches("*:name", "user:42:name"));
  CHECK(glob_matches("a*b*c", "aXXbYYc"));
  CHECK_FALSE(glob_matches("a*b*c", "aXXbYY"));
  CHECK(glob_matches("a**b", "ab"));
  CHECK(glob_matches("h?llo", "hello"));
  CHECK_FALSE(glob_matches("h?llo", "hllo"));
  CHECK(glob_matches("", ""));
  CHECK_FALSE(glob_matches("", "a"));
  CHECK_FALSE(glob_matches("a", ""));
  CHECK(glob_matches("abc*", "abc"));
}

TEST_CASE("glob: classes with negation, ranges and escapes") {
  CHECK(glob_matches("h[ae]llo", "hallo"));
  CHECK_FALSE(glob_matches("h[ae]llo", "hillo"));
  CHECK(glob_matches("h[^e]llo", "hallo"));
  CHECK_FALSE(glob_matches("h[^e]llo", "hello"));
  CHECK(glob_matches("h[a-b]llo", "hbllo"));
  CHECK(glob_matches("h[b-a]llo", "hallo"));  // a reversed range counts, as in Redis
  CHECK_FALSE(glob_matches("h[a-b]llo", "hcllo"));
  CHECK(glob_matches("[\\]]", "]"));
  CHECK(glob_matches("a\\*b", "a*b"));
  CHECK_FALSE(glob_matches("a\\*b", "axb"));
  CHECK(glob_matches("a\\?", "a?"));
  CHECK(glob_matches("[abc", "a"));  // an unclosed class ends with the pattern
  CHECK(glob_matches("\\", "\\"));   // a trailing backslash is literal
}

TEST_CASE("glob: keys are bytes, NUL and high bytes included") {
  std::string key("a\0b", 3);
  CHECK(glob_matches("a*", key));
  CHECK(glob_matches(std::string("a\0b", 3), key));
  CHECK_FALSE(glob_matches("a", key));
  CHECK(glob_matches("a?b", key));
  std::string high("k\xff", 2);
  CHECK(glob_matches("k?", high));
  CHECK(glob_matches(std::string("k[\xfe-\xff]", 6), high));
}

TEST_CASE("glob: a pathological pattern ends quickly") {
  std::string text(200, 'a');
  CHECK_FALSE(glob_matches("a*a*a*a*a*a*a*a*a*a*a*b", text));
}
