// commands: (module or custom commands declared with their keys and flags), cluster_endpoint:
// and announce: as the config reads them.
#include <catch2/catch.hpp>

#include "config/config.h"
#include "protocol/command_categories.h"
#include "tests/support/config_text.h"

using santral::config::Config;
using santral::test::check_config_errors;
using santral::test::kTwoShards;
using santral::test::load_config_text;
namespace protocol = santral::protocol;

TEST_CASE("commands: keys at positions or after a count, flags, implied ACL categories") {
  Config config = load_config_text(
      kTwoShards +
      "commands:\n"
      "  - {name: JSON.SET, first_key: 1, flags: [write], arity: -4}\n"
      "  - {name: mymod.mget, first_key: 1, last_key: -1, flags: [readonly, fast]}\n"
      "  - {name: mymod.mset, first_key: 1, last_key: -1, key_step: 2}\n"
      "  - {name: mymod.union, numkeys_at: 1}\n"
      "  - {name: mymod.ping}\n");
  REQUIRE(config.commands.size() == 5);
  const auto& set = config.commands[0];
  CHECK(set.name == "json.set");
  CHECK(set.arity == -4);
  REQUIRE(set.key_specs.size() == 1);
  CHECK(set.key_specs[0].spec.index == 1);
  CHECK(set.key_specs[0].spec.lastkey == 0);
  CHECK((set.categories & protocol::category_bit(protocol::AclCategory::Write)) != 0);
  CHECK((set.categories & protocol::category_bit(protocol::AclCategory::Slow)) != 0);
  const auto& mget = config.commands[1];
  CHECK(mget.key_specs[0].spec.lastkey == -1);
  CHECK((mget.categories & protocol::category_bit(protocol::AclCategory::Read)) != 0);
  CHECK((mget.categories & protocol::category_bit(protocol::AclCategory::Fast)) != 0);
  CHECK(config.commands[2].key_specs[0].spec.keystep == 2);
  CHECK(config.commands[3].key_specs[0].spec.find == protocol::KeySpec::Find::Keynum);
  CHECK(config.commands[4].key_specs.empty());
  CHECK_FALSE(config.cluster_endpoint);
  CHECK_FALSE(config.announce.has_value());
}

TEST_CASE("cluster_endpoint and announce") {
  Config config =
      load_config_text(kTwoShards + "cluster_endpoint: true\nannounce: 10.0.0.5:7000\n");
  CHECK(config.cluster_endpoint);
  REQUIRE(config.announce.has_value());
  CHECK(config.announce->text() == "10.0.0.5:7000");
}

TEST_CASE("commands: and announce: mistakes name the line and the key") {
  check_config_errors({
      {"commands:\n  - {name: get, first_key: 1}\n", 7, "commands[0].name", "knows already"},
      {"commands:\n  - {first_key: 1}\n", 7, "commands[0].name", "needs a name"},
      {"commands:\n  - {name: a.b, flags: [sometimes]}\n", 7, "commands[0].flags[0]",
       "unknown flag"},
      {"commands:\n  - {name: a.b, first_key: 2, last_key: 1}\n", 7, "commands[0].last_key",
       "at least first_key"},
      {"commands:\n  - {name: a.b, first_key: 1, numkeys_at: 2}\n", 7, "commands[0].numkeys_at",
       "not both"},
      {"commands:\n  - {name: a.b}\n  - {name: A.B}\n", 8, "commands[1].name", "twice"},
      {"commands:\n  - {name: a.b, keys: 1}\n", 7, "commands[0].keys", "unknown key"},
      {"announce: nowhere\n", 6, "announce", "host:port"},
      {"cluster_endpoint: maybe\n", 6, "cluster_endpoint", ""},
  });
}
