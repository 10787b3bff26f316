// COMMAND INFO read into command shapes, and the learned table made from several shards.
#include <catch2/catch.hpp>

#include <string>

#include "config/acl/acl_rules.h"
#include "protocol/learned_commands.h"
#include "protocol/reply_value.h"

using namespace santral;
using protocol::CommandShape;

namespace {

// HEXPIRE as Redis 7.4 describes it (RESP2), and a Redis 6 style entry without key specs.
const std::string kCommandInfo =
    "*2\r\n"
    "*10\r\n$7\r\nhexpire\r\n:-6\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
    "*3\r\n$6\r\n@write\r\n$5\r\n@hash\r\n$5\r\n@fast\r\n*0\r\n"
    "*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+update\r\n"
    "$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:"
    "1\r\n"
    "$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n"
    "$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n"
    "*0\r\n"
    "*7\r\n$9\r\nmymod.set\r\n:-3\r\n*1\r\n+write\r\n:1\r\n:-1\r\n:2\r\n*1\r\n$6\r\n@write\r\n";

std::vector<CommandShape> read(const std::string& text) {
  protocol::ReplyValue value;
  REQUIRE(protocol::parse_reply(text, value));
  return protocol::read_command_info(value);
}

}  // namespace

TEST_CASE("COMMAND INFO: flags, categories and key specs, Redis 7's and Redis 6's") {
  auto shapes = read(kCommandInfo);
  REQUIRE(shapes.size() == 2);
  const auto& hexpire = shapes[0];
  CHECK(hexpire.name == "hexpire");
  CHECK(hexpire.arity == -6);
  CHECK((hexpire.flags & protocol::kWrite) != 0);
  CHECK((hexpire.categories & protocol::category_bit(protocol::AclCategory::Hash)) != 0);
  REQUIRE(hexpire.key_specs.size() == 1);
  CHECK(hexpire.key_specs[0].spec.begin == protocol::KeySpec::Begin::Index);
  CHECK(hexpire.key_specs[0].spec.index == 1);
  CHECK(hexpire.key_specs[0].spec.find == protocol::KeySpec::Find::Range);
  const auto& legacy = shapes[1];
  REQUIRE(legacy.key_specs.size() == 1);  // first 1, last -1, step 2
  CHECK(legacy.key_specs[0].spec.lastkey == -1);
  CHECK(legacy.key_specs[0].spec.keystep == 2);
  std::string reason;
  CHECK(protocol::learned_routing(hexpire, reason) == protocol::Routing::Keyed);
}

TEST_CASE("learned: only what every shard knows, built-in commands never, one spec per shape") {
  auto shapes = read(kCommandInfo);
  CommandShape get;  // a built-in command is never learned
  get.name = "get";
  protocol::CommandArchive archive;
  protocol::CommandArchive::Sources sources;
  sources.shards = {shapes, {shapes[0], get}};
  sources.every_shard_answered = true;
  sources.lowest_version = "7.2.4";
  auto learned = archive.build(sources);
  REQUIRE(learned->find("HEXPIRE") != nullptr);
  CHECK(learned->find("mymod.set") == nullptr);  // the second shard does not have it
  CHECK(learned->find("get") == nullptr);
  CHECK(learned->lowest_version() == "7.2.4");
  CHECK(learned->find("hexpire")->id == protocol::kLearnedCommandId);
  // The same shape learned again is the same spec: counters and reply slots keep pointing at it.
  auto again = archive.build(sources);
  CHECK(again->find("hexpire") == learned->find("hexpire"));
  CHECK(again->same_as(*learned));
  // Until every shard has answered, nothing is learned from the shards.
  sources.every_shard_answered = false;
  CHECK(archive.build(sources)->find("hexpire") == nullptr);
}

TEST_CASE("a learned command's ACL check replays the user's category rules") {
  auto shapes = read(kCommandInfo);
  protocol::CommandArchive archive;
  protocol::CommandArchive::Sources sources;
  sources.shards = {shapes};
  sources.every_shard_answered = true;
  const auto& hexpire = *archive.build(sources)->find("hexpire");
  auto user = [](const char* rules) {
    auto permissions = config::new_acl_user();
    REQUIRE(config::apply_acl_rules(permissions, rules).empty());
    return permissions;
  };
  CHECK(user("+@all").allows(hexpire));
  CHECK(user("+@all -get").allows(hexpire));
  CHECK_FALSE(user("+@all -@write").allows(hexpire));
  CHECK(user("+@all -@write +@hash").allows(hexpire));
  CHECK_FALSE(user("+@read").allows(hexpire));
  CHECK_FALSE(user("nocommands").allows(hexpire));
}

TEST_CASE("versions compare by number") {
  CHECK(protocol::older_version("7.0.15", "7.2.4"));
  CHECK(protocol::older_version("7.2.4", "10.0.0"));
  CHECK_FALSE(protocol::older_version("8.0.0", "7.4.2"));
  CHECK(protocol::older_version("7.0.15", ""));
}
