// MONITOR's lines as Redis 7.0 writes them (replicationFeedMonitors): the time, the database and
// the client, each argument quoted as sdscatrepr quotes it, passwords hidden.
#include <catch2/catch.hpp>

#include <chrono>
#include <string_view>
#include <vector>

#include "router/routes/monitor_feed.h"

using santral::router::monitor_line;

namespace {

std::string line(std::vector<std::string_view> args, int database = 0) {
  auto at = std::chrono::system_clock::time_point(std::chrono::microseconds(1339518083107412));
  return monitor_line(at, database, "127.0.0.1:60866", args);
}

}  // namespace

TEST_CASE("a monitor line: time in microseconds, database, client, the arguments quoted") {
  CHECK(line({"keys", "*"}) == "+1339518083.107412 [0 127.0.0.1:60866] \"keys\" \"*\"\r\n");
  CHECK(line({"GET", "k"}, 3) == "+1339518083.107412 [3 127.0.0.1:60866] \"GET\" \"k\"\r\n");
  auto at = std::chrono::system_clock::time_point(std::chrono::microseconds(5000000000000042));
  CHECK(monitor_line(at, 0, "[::1]:7", std::vector<std::string_view>{"PING"}) ==
        "+5000000000.000042 [0 [::1]:7] \"PING\"\r\n");
}

TEST_CASE("an argument is quoted as Redis quotes it: escapes, and hex for what is not printable") {
  using namespace std::string_view_literals;
  CHECK(line({"SET", "a\"b\\c", "x\n\r\t\a\by", "\x01\xff"sv}) ==
        "+1339518083.107412 [0 127.0.0.1:60866] \"SET\" \"a\\\"b\\\\c\" \"x\\n\\r\\t\\a\\by\" "
        "\"\\x01\\xff\"\r\n");
  CHECK(line({"SET", ""}) == "+1339518083.107412 [0 127.0.0.1:60866] \"SET\" \"\"\r\n");
}

TEST_CASE("passwords are redacted: AUTH, HELLO ... AUTH, MIGRATE ... AUTH / AUTH2") {
  const std::string head = "+1339518083.107412 [0 127.0.0.1:60866] ";
  CHECK(line({"auth", "pw"}) == head + "\"auth\" \"(redacted)\"\r\n");
  CHECK(line({"AUTH", "user", "pw"}) == head + "\"AUTH\" \"(redacted)\" \"(redacted)\"\r\n");
  CHECK(line({"hello", "3", "auth", "u", "p", "setname", "n"}) ==
        head + "\"hello\" \"3\" \"auth\" \"(redacted)\" \"(redacted)\" \"setname\" \"n\"\r\n");
  CHECK(line({"hello", "3", "setname", "auth"}) ==
        head + "\"hello\" \"3\" \"setname\" \"auth\"\r\n");
  CHECK(line({"migrate", "h", "1", "", "0", "10", "auth", "pw", "keys", "auth", "k"}) ==
        head +
            "\"migrate\" \"h\" \"1\" \"\" \"0\" \"10\" \"auth\" \"(redacted)\" \"keys\" \"auth\" "
            "\"k\"\r\n");
  CHECK(line({"migrate", "h", "1", "k", "0", "10", "AUTH2", "u", "p"}) ==
        head +
            "\"migrate\" \"h\" \"1\" \"k\" \"0\" \"10\" \"AUTH2\" \"(redacted)\" "
            "\"(redacted)\"\r\n");
  CHECK(line({"set", "auth", "pw"}) == head + "\"set\" \"auth\" \"pw\"\r\n");
}
