#include <catch2/catch.hpp>

#include <string>

#include "config/config.h"
#include "config/config_error.h"
#include "tests/support/config_text.h"

using namespace santral::config;
using santral::test::check_config_errors;
using santral::test::kTwoShards;
using santral::test::load_config_text;

TEST_CASE("hotkeys: and salting: are read, with documented defaults") {
  Config plain = load_config_text(kTwoShards);
  CHECK(plain.hotkeys.enabled);
  CHECK(plain.hotkeys.sample_every == 16);
  CHECK(plain.hotkeys.capacity == 64);
  CHECK(plain.hotkeys.window_s == 10);
  CHECK(plain.salting.empty());
  CHECK_FALSE(plain.hotkeys.auto_salt.enabled);
  CHECK(plain.hotkeys.auto_salt.writes_per_sec == 10000);
  CHECK(plain.hotkeys.auto_salt.for_s == 10);
  CHECK(plain.hotkeys.auto_salt.salts == 4);
  CHECK(plain.hotkeys.auto_salt.reply == SaltReply::Estimate);
  CHECK(plain.hotkeys.auto_salt.cold_writes_per_sec == 1000);
  CHECK(plain.hotkeys.auto_salt.cold_for_s == 60);
  CHECK(plain.hotkeys.auto_salt.check_ms == 1000);

  Config c =
      load_config_text(kTwoShards +
                       "hotkeys: {enabled: false, sample_every: 4, capacity: 8, window_s: 2}\n"
                       "salting:\n"
                       "  - key: likes:500\n"
                       "    salts: 8\n"
                       "    reply: exact\n"
                       "  - match: \"views:{post}\"\n"
                       "    salts: 4\n");
  CHECK_FALSE(c.hotkeys.enabled);
  CHECK(c.hotkeys.sample_every == 4);
  CHECK(c.hotkeys.capacity == 8);
  CHECK(c.hotkeys.window_s == 2);
  REQUIRE(c.salting.size() == 2);
  CHECK(c.salting[0].key == "likes:500");
  CHECK(c.salting[0].salts == 8);
  CHECK(c.salting[0].reply == SaltReply::Exact);
  REQUIRE(c.salting[1].pattern);
  CHECK(c.salting[1].pattern->match("views:42"));
  CHECK(c.salting[1].reply == SaltReply::Estimate);

  Config a =
      load_config_text(kTwoShards +
                       "hotkeys:\n"
                       "  auto_salt: {enabled: true, writes_per_sec: 500, for_s: 2, salts: 8, "
                       "reply: exact, cold_writes_per_sec: 10, cold_for_s: 5, check_ms: 50}\n");
  CHECK(a.hotkeys.auto_salt.enabled);
  CHECK(a.hotkeys.auto_salt.writes_per_sec == 500);
  CHECK(a.hotkeys.auto_salt.for_s == 2);
  CHECK(a.hotkeys.auto_salt.salts == 8);
  CHECK(a.hotkeys.auto_salt.reply == SaltReply::Exact);
  CHECK(a.hotkeys.auto_salt.cold_writes_per_sec == 10);
  CHECK(a.hotkeys.auto_salt.cold_for_s == 5);
  CHECK(a.hotkeys.auto_salt.check_ms == 50);
}

TEST_CASE("full.yaml shows the hot-key settings") {
  Config c = load_config(SANTRAL_SOURCE_DIR "/config/examples/full.yaml");
  CHECK(c.hotkeys.enabled);
  CHECK(c.hotkeys.sample_every == 16);
  REQUIRE(c.salting.size() >= 2);
  CHECK(c.salting[0].reply == SaltReply::Estimate);
  CHECK_FALSE(c.hotkeys.auto_salt.enabled);
  CHECK(c.hotkeys.auto_salt.writes_per_sec == 10000);
  CHECK(c.hotkeys.auto_salt.cold_for_s == 60);
}

TEST_CASE("salting config errors name the file, the line and the key") {
  check_config_errors({
      {"salting:\n  - key: a\n    salts: 1\n", 8, "salting[0].salts", "out of range"},
      {"salting:\n  - key: a\n    salts: 2000\n", 8, "salting[0].salts", "out of range"},
      {"salting:\n  - key: a\n", 7, "salting[0].salts", "missing"},
      {"salting:\n  - key: a\n    match: b{x}\n    salts: 2\n", 7, "salting[0]", "not both"},
      {"salting:\n  - salts: 2\n", 7, "salting[0]", "either `key:`"},
      {"salting:\n  - key: a\n    salts: 2\n    reply: maybe\n", 9, "salting[0].reply",
       "expected estimate or exact"},
      {"salting:\n  - match: \"a{\"\n    salts: 2\n", 7, "salting[0].match", "closing"},
      {"salting:\n  - key: a\n    salts: 2\n  - key: a\n    salts: 3\n", 9, "salting[1]",
       "salted twice"},
      {"salting:\n  - key: a\n    salt: 2\n", 8, "salting[0].salt", "unknown key"},
      {"salting: a\n", 6, "salting", "expected a list"},
      {"hotkeys:\n  sample_every: 0\n", 7, "hotkeys.sample_every", "out of range"},
      {"hotkeys:\n  enable: true\n", 7, "hotkeys.enable", "unknown key"},
      {"hotkeys:\n  auto_salt:\n    enabled: yes please\n", 8, "hotkeys.auto_salt.enabled", ""},
      {"hotkeys:\n  auto_salt:\n    salts: 1\n", 8, "hotkeys.auto_salt.salts", "out of range"},
      {"hotkeys:\n  auto_salt:\n    writes_per_sec: 0\n", 8, "hotkeys.auto_salt.writes_per_sec",
       "out of range"},
      {"hotkeys:\n  auto_salt:\n    reply: maybe\n", 8, "hotkeys.auto_salt.reply",
       "expected estimate or exact"},
      {"hotkeys:\n  auto_salt:\n    check_ms: 1\n", 8, "hotkeys.auto_salt.check_ms",
       "out of range"},
      {"hotkeys:\n  auto_salt:\n    for: 10\n", 8, "hotkeys.auto_salt.for", "unknown key"},
      {"hotkeys:\n  auto_salt:\n    writes_per_sec: 100\n    cold_writes_per_sec: 100\n", 9,
       "hotkeys.auto_salt.cold_writes_per_sec", "must be below writes_per_sec (100)"},
      {"hotkeys:\n  auto_salt:\n    writes_per_sec: 500\n", 8,
       "hotkeys.auto_salt.cold_writes_per_sec", "must be below writes_per_sec (500)"},
      {"hotkeys:\n  enabled: false\n  auto_salt: {enabled: true}\n", 8, "hotkeys.auto_salt.enabled",
       "needs hot-key detection"},
  });
}
