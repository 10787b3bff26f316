#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "protocol/command_table.h"
#include "protocol/key_extraction.h"

using namespace santral::protocol;

namespace {

// The key arguments of a command line, as Santral finds them.
std::vector<std::string> keys_of(std::vector<std::string_view> args) {
  const CommandSpec* spec = find_command(args[0]);
  REQUIRE(spec != nullptr);
  if (spec->routing == Routing::Container) spec = find_subcommand(*spec, args[1]);
  REQUIRE(spec != nullptr);
  std::vector<std::uint32_t> positions;
  REQUIRE(find_keys(*spec, args, positions));
  std::vector<std::string> keys;
  for (auto p : positions) keys.emplace_back(args[p]);
  return keys;
}

bool malformed(std::vector<std::string_view> args) {
  const CommandSpec* spec = find_command(args[0]);
  std::vector<std::uint32_t> positions;
  return !find_keys(*spec, args, positions);
}

using Keys = std::vector<std::string>;

}  // namespace

TEST_CASE("single-key commands") {
  CHECK(keys_of({"GET", "a"}) == Keys{"a"});
  CHECK(keys_of({"set", "a", "1", "EX", "10"}) == Keys{"a"});
  CHECK(keys_of({"HSET", "h", "f", "v", "g", "w"}) == Keys{"h"});
  CHECK(keys_of({"OBJECT", "ENCODING", "k"}) == Keys{"k"});
  CHECK(keys_of({"XINFO", "STREAM", "s"}) == Keys{"s"});
}

TEST_CASE("multi-key commands by range and step") {
  CHECK(keys_of({"MGET", "a", "b", "c"}) == Keys{"a", "b", "c"});
  CHECK(keys_of({"MSET", "a", "1", "b", "2"}) == Keys{"a", "b"});
  CHECK(keys_of({"DEL", "a", "b"}) == Keys{"a", "b"});
  CHECK(keys_of({"RENAME", "a", "b"}) == Keys{"a", "b"});
  CHECK(keys_of({"BITOP", "AND", "dst", "x", "y"}) == Keys{"dst", "x", "y"});
  CHECK(keys_of({"BLPOP", "a", "b", "0"}) == Keys{"a", "b"});
  CHECK(keys_of({"LMOVE", "a", "b", "LEFT", "RIGHT"}) == Keys{"a", "b"});
}

TEST_CASE("commands whose key count is an argument") {
  CHECK(keys_of({"EVAL", "return 1", "2", "k1", "k2", "arg"}) == Keys{"k1", "k2"});
  CHECK(keys_of({"EVAL", "return 1", "0", "arg"}).empty());
  CHECK(keys_of({"ZUNIONSTORE", "dst", "2", "a", "b", "WEIGHTS", "1", "2"}) ==
        Keys{"dst", "a", "b"});
  CHECK(keys_of({"ZUNION", "2", "a", "b"}) == Keys{"a", "b"});
  CHECK(keys_of({"LMPOP", "2", "a", "b", "LEFT"}) == Keys{"a", "b"});
  CHECK(keys_of({"SINTERCARD", "2", "a", "b", "LIMIT", "3"}) == Keys{"a", "b"});
  CHECK(malformed({"EVAL", "return 1", "x", "k"}));
  CHECK(malformed({"EVAL", "return 1", "5", "k"}));
}

TEST_CASE("commands whose keys follow a keyword") {
  CHECK(keys_of({"XREAD", "COUNT", "2", "STREAMS", "s1", "s2", "0", "0"}) == Keys{"s1", "s2"});
  CHECK(keys_of({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s1", "0"}) == Keys{"s1"});
  CHECK(keys_of({"GEORADIUS", "g", "0", "0", "1", "km", "STORE", "dst"}) == Keys{"g", "dst"});
  CHECK(keys_of({"GEORADIUS", "g", "0", "0", "1", "km"}) == Keys{"g"});
}

TEST_CASE("SORT and MIGRATE follow Redis's own rules") {
  CHECK(keys_of({"SORT", "k"}) == Keys{"k"});
  CHECK(keys_of({"SORT", "k", "BY", "w_*", "LIMIT", "0", "5", "GET", "o_*", "STORE", "dst"}) ==
        Keys{"k", "dst"});
  CHECK(keys_of({"SORT", "k", "GET", "store", "ALPHA"}) == Keys{"k"});  // "store" is GET's pattern
  CHECK(keys_of({"SORT_RO", "k", "ALPHA"}) == Keys{"k"});
  CHECK(keys_of({"MIGRATE", "h", "1", "k", "0", "100"}) == Keys{"k"});
  CHECK(keys_of({"MIGRATE", "h", "1", "", "0", "100", "COPY", "KEYS", "a", "b"}) == Keys{"a", "b"});
  CHECK(malformed({"MIGRATE", "h", "1", "k", "0", "100", "KEYS", "a"}));
}
