// command_bytes: a control-plane request's RESP bytes (call_shard needs a shard: not here).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "router/resharding/shard_calls.h"

using namespace santral;

TEST_CASE("command_bytes writes one RESP array of bulk strings") {
  CHECK(router::command_bytes({"DBSIZE"}) == "*1\r\n$6\r\nDBSIZE\r\n");
  CHECK(router::command_bytes({"MEMORY", "USAGE", "k\r\n"}) ==
        "*3\r\n$6\r\nMEMORY\r\n$5\r\nUSAGE\r\n$3\r\nk\r\n\r\n");
  std::vector<std::string> args = {"SCAN", "0", "COUNT", "100", ""};
  CHECK(router::command_bytes(args) ==
        "*5\r\n$4\r\nSCAN\r\n$1\r\n0\r\n$5\r\nCOUNT\r\n$3\r\n100\r\n$0\r\n\r\n");
  CHECK(router::command_bytes(args) == router::command_bytes({"SCAN", "0", "COUNT", "100", ""}));
}
