#include "protocol/resp2_reply.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace santral::protocol;

namespace {

// `frame`, a RESP3 reply to the command `args`, as a RESP2 client gets it. The expected bytes
// below are what redis-server 7.0.15 sends a RESP2 client for the same command on the same data.
std::string downgraded(std::vector<std::string_view> args, std::string_view frame) {
  const CommandSpec* command = find_command(args.front());
  REQUIRE(command != nullptr);
  std::string out;
  INFO("frame " << frame);
  REQUIRE(to_resp2(frame, resp2_shape(*command, args), out));
  return out;
}

}  // namespace

TEST_CASE("RESP3 types become their RESP2 forms", "[resp2]") {
  CHECK(downgraded({"hgetall", "h"}, "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n") ==
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
  CHECK(downgraded({"smembers", "s"}, "~2\r\n$1\r\na\r\n$1\r\nb\r\n") ==
        "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  CHECK(downgraded({"zscore", "z", "m"}, ",1.1000000000000001\r\n") ==
        "$18\r\n1.1000000000000001\r\n");
  CHECK(downgraded({"zscore", "z", "m"}, ",inf\r\n") == "$3\r\ninf\r\n");
  CHECK(downgraded({"eval", "return 1", "0"}, "#t\r\n") == ":1\r\n");
  CHECK(downgraded({"eval", "return 1", "0"}, "#f\r\n") == ":0\r\n");
  CHECK(downgraded({"eval", "return 1", "0"}, "(3492890328409238509324850943850943825024385\r\n") ==
        "$43\r\n3492890328409238509324850943850943825024385\r\n");
  CHECK(downgraded({"memory", "doctor"}, "=15\r\ntxt:Some string\r\n") == "$11\r\nSome string\r\n");
  CHECK(downgraded({"config", "get", "x"}, "%0\r\n") == "*0\r\n");
}

TEST_CASE("RESP3 null: a null bulk or a null array, as the command has it", "[resp2]") {
  CHECK(downgraded({"get", "k"}, "_\r\n") == "$-1\r\n");
  CHECK(downgraded({"hmget", "h", "a", "b"}, "*2\r\n_\r\n$1\r\n1\r\n") ==
        "*2\r\n$-1\r\n$1\r\n1\r\n");
  CHECK(downgraded({"lpop", "l"}, "_\r\n") == "$-1\r\n");
  CHECK(downgraded({"lpop", "l", "2"}, "_\r\n") == "*-1\r\n");
  CHECK(downgraded({"rpop", "l", "0"}, "_\r\n") == "*-1\r\n");
  CHECK(downgraded({"lmpop", "1", "l", "left"}, "_\r\n") == "*-1\r\n");
  CHECK(downgraded({"zmpop", "1", "z", "min"}, "_\r\n") == "*-1\r\n");
  CHECK(downgraded({"xread", "streams", "s", "0"}, "_\r\n") == "*-1\r\n");
  CHECK(downgraded({"geopos", "g", "a", "nosuch"},
                   "*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n") ==
        "*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*-1\r\n");
  CHECK(downgraded({"eval", "return {1,false}", "0"}, "*2\r\n:1\r\n_\r\n") ==
        "*2\r\n:1\r\n$-1\r\n");
}

TEST_CASE("member-score pairs are flat in RESP2, where Redis flattens them", "[resp2]") {
  const char* pairs = "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n";
  const char* flat = "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\n2.5\r\n";
  CHECK(downgraded({"zrange", "z", "0", "-1", "withscores"}, pairs) == flat);
  CHECK(downgraded({"zrandmember", "z", "2", "withscores"}, pairs) == flat);
  CHECK(downgraded({"zpopmin", "z", "2"}, pairs) == flat);
  CHECK(downgraded({"zunion", "2", "a", "b", "withscores"}, pairs) == flat);
  CHECK(downgraded({"hrandfield", "h", "2", "withvalues"}, "*1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n") ==
        "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
  // ZPOPMIN without a count is one flat pair already.
  CHECK(downgraded({"zpopmin", "z"}, "*2\r\n$1\r\na\r\n,1\r\n") == "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
  // ZMPOP keeps its nesting in RESP2.
  CHECK(downgraded({"zmpop", "1", "z", "min"}, "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n,1\r\n") ==
        "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
  // A reply that is not pairs stays as it is.
  CHECK(downgraded({"zrange", "z", "0", "-1"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n") ==
        "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
}

TEST_CASE("XREAD's map of streams is an array of [key, entries] pairs in RESP2", "[resp2]") {
  CHECK(downgraded({"xread", "streams", "s", "0"},
                   "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n") ==
        "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
  // XREADGROUP's history with a deleted entry: [id, null array].
  CHECK(downgraded({"xreadgroup", "group", "g", "c", "streams", "s", "0"},
                   "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n_\r\n") ==
        "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*-1\r\n");
}

TEST_CASE("a RESP2 reply comes out unchanged, whatever the command", "[resp2]") {
  for (std::string_view frame :
       {"$-1\r\n", "*-1\r\n", "*3\r\n$1\r\na\r\n$-1\r\n*-1\r\n", "+OK\r\n", "-ERR x\r\n", ":12\r\n",
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"}) {
    for (std::vector<std::string_view> args : {std::vector<std::string_view>{"get", "k"},
                                               {"zrange", "z", "0", "-1", "withscores"},
                                               {"xread", "streams", "s", "0"},
                                               {"lpop", "l", "2"},
                                               {"geopos", "g", "a"}}) {
      INFO(args.front());
      CHECK(downgraded(args, frame) == frame);
    }
  }
}

TEST_CASE("XREAD's RESP2 reply (pairs already) comes out unchanged", "[resp2]") {
  const char* frame = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*-1\r\n";
  CHECK(downgraded({"xreadgroup", "group", "g", "c", "streams", "s", "0"}, frame) == frame);
}

TEST_CASE("a malformed frame is refused, nothing written", "[resp2]") {
  std::string out;
  CHECK_FALSE(to_resp2("%1\r\n$1\r\na\r\n", {}, out));
  CHECK_FALSE(to_resp2("?\r\n", {}, out));
  CHECK(out.empty());
}
