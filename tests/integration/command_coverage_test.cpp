// Every command the backend knows has a routing rule in Santral's table, subcommands included.
#include <catch2/catch.hpp>

#include "protocol/command_table.h"
#include "tests/support/redis_server.h"

using namespace santral::test;
using namespace santral::protocol;

TEST_CASE("the command table classifies every command of the live redis-server") {
  RedisServer server;
  auto client = server.client();
  auto commands = client.command({"COMMAND"});
  REQUIRE(commands.type == Reply::Type::Array);
  REQUIRE(commands.elements.size() > 200);
  int checked = 0;
  for (const auto& command : commands.elements) {
    const std::string& name = command.elements.at(0).str;
    INFO("command " << name);
    const CommandSpec* spec = find_command(name);
    REQUIRE(spec != nullptr);
    ++checked;
    const auto& subcommands = command.elements.at(9).elements;
    // The table may have a subcommand newer than this server that Santral answers itself
    // (CLUSTER MYSHARDID, Redis 7.2); every other one must be the server's.
    std::size_t newer = 0;
    for (const auto& mine : spec->subcommands) {
      bool listed = false;
      for (const auto& sub : subcommands) listed = listed || sub.elements.at(0).str == mine.name;
      if (!listed) {
        INFO("subcommand " << mine.name << " is not the server's");
        CHECK(mine.routing == Routing::Local);
        ++newer;
      }
    }
    CHECK(spec->subcommands.size() == subcommands.size() + newer);
    for (const auto& sub : subcommands) {
      const std::string& full = sub.elements.at(0).str;  // "client|setname"
      INFO("subcommand " << full);
      auto bar = full.find('|');
      REQUIRE(bar != std::string::npos);
      const CommandSpec* sub_spec = find_subcommand(*spec, full.substr(bar + 1));
      REQUIRE(sub_spec != nullptr);
      CHECK(sub_spec->arity == sub.elements.at(1).integer);
      ++checked;
    }
    CHECK(spec->arity == command.elements.at(1).integer);
  }
  CHECK(checked > 300);
}
