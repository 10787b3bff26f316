// ScriptCache: scripts by SHA1, found in any case, the oldest forgotten past the limit.
#include <catch2/catch.hpp>

#include <string>

#include "router/routes/script_cache.h"

using santral::router::ScriptCache;

TEST_CASE("a script's SHA1 is Redis's: 40 lower-case hex digits of the body") {
  // Redis: SCRIPT LOAD "return 1" answers e0e1f9fabfc9d4800c877a703b823ac0578ff8db.
  CHECK(ScriptCache::sha1_hex("return 1") == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  CHECK(ScriptCache::sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

TEST_CASE("a remembered body is found by its SHA1 in any case") {
  ScriptCache cache;
  auto sha = cache.remember("return 1");
  REQUIRE(cache.body_of(sha) != nullptr);
  CHECK(*cache.body_of(sha) == "return 1");
  std::string upper = sha;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(cache.knows(upper));
  CHECK_FALSE(cache.knows(ScriptCache::sha1_hex("return 2")));
  cache.remember("return 1");
  CHECK(cache.size() == 1);  // once, however often it is seen
  cache.clear();
  CHECK_FALSE(cache.knows(sha));
}

TEST_CASE("past kMaxScripts the oldest script is forgotten first") {
  ScriptCache cache;
  auto first = cache.remember("return 0");
  auto second = cache.remember("return 1");
  for (std::size_t i = 2; i < ScriptCache::kMaxScripts; ++i)
    cache.remember("return " + std::to_string(i));
  CHECK(cache.size() == ScriptCache::kMaxScripts);
  CHECK(cache.knows(first));
  cache.remember("one more");
  CHECK(cache.size() == ScriptCache::kMaxScripts);
  CHECK_FALSE(cache.knows(first));
  CHECK(cache.knows(second));
}
