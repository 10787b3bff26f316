#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "protocol/command_table.h"

using namespace santral::protocol;

TEST_CASE("lookup ignores case and knows subcommands") {
  const CommandSpec* get = find_command("gEt");
  REQUIRE(get != nullptr);
  CHECK(get->name == "get");
  CHECK(get->routing == Routing::Keyed);
  CHECK(get->arity == 2);
  CHECK(get->has(kReadonly));
  CHECK(find_command("nosuchcommand") == nullptr);
  CHECK(find_command(std::string(200, 'x')) == nullptr);

  const CommandSpec* client = find_command("CLIENT");
  REQUIRE(client != nullptr);
  CHECK(client->routing == Routing::Container);
  const CommandSpec* setname = find_subcommand(*client, "SetName");
  REQUIRE(setname != nullptr);
  CHECK(setname->name == "client|setname");
  CHECK(setname->routing == Routing::Local);
  CHECK(find_subcommand(*client, "nope") == nullptr);
}

TEST_CASE("arity follows Redis: N exact, -N at least N") {
  const CommandSpec* get = find_command("get");
  CHECK(get->arity_ok(2));
  CHECK_FALSE(get->arity_ok(1));
  CHECK_FALSE(get->arity_ok(3));
  const CommandSpec* del = find_command("del");
  CHECK(del->arity_ok(2));
  CHECK(del->arity_ok(9));
  CHECK_FALSE(del->arity_ok(1));
}

TEST_CASE("every rule is complete") {
  std::set<std::string_view> names;
  auto check = [&](const CommandSpec& spec) {
    INFO(spec.name);
    CHECK(names.insert(spec.name).second);
    switch (spec.routing) {
      case Routing::Refused:
        CHECK_FALSE(spec.reason.empty());
        break;
      case Routing::Split:
      case Routing::Broadcast:
        CHECK(spec.merge != Merge::None);
        break;
      case Routing::Local:
        CHECK(spec.local != LocalHandler::None);
        break;
      case Routing::Stateful:
        CHECK(spec.stateful != StatefulKind::None);
        break;
      case Routing::Keyed:
        CHECK_FALSE(spec.key_specs.empty());
        break;
      case Routing::Container:
        CHECK_FALSE(spec.subcommands.empty());
        break;
      case Routing::Any:
      case Routing::Channel:
        break;
    }
  };
  for (const CommandSpec& spec : all_commands()) {
    check(spec);
    for (const CommandSpec& sub : spec.subcommands) check(sub);
  }
  CHECK(names.size() > 300);
}
