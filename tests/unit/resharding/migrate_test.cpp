// migrate: the bytes of MIGRATE as a shard receives them, and which replies mean "moved".
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "router/resharding/migrate.h"

using namespace santral;

namespace {

config::Config config_of(const std::string& extra = "") {
  return config::parse_config(
      "shards:\n"
      "  - {name: shard0, address: 127.0.0.1:7000}\n"
      "  - {name: shard1, address: 127.0.0.1:7001}\n" +
          extra,
      "test.yaml");
}

// RESP array of bulk strings, written out independently of protocol::RespWriter.
std::string resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

}  // namespace

TEST_CASE("migrate_command: MIGRATE host port \"\" db timeout KEYS ..., never REPLACE") {
  auto config = config_of("resharding: {migrate_timeout_ms: 2500}\n");
  REQUIRE(config.resharding.migrate_timeout.count() == 2500);
  const auto& target = config.shards[1].address;
  std::vector<std::string_view> keys = {"a", "user:{42}", ""};
  CHECK(router::migrate_command(config, target, 3, keys) ==
        resp({"MIGRATE", "127.0.0.1", "7001", "", "3", "2500", "KEYS", "a", "user:{42}", ""}));
  CHECK(router::migrate_arguments(config, target, 3) ==
        std::vector<std::string>{"MIGRATE", "127.0.0.1", "7001", "", "3", "2500"});
}

TEST_CASE("migrate_command logs in at the target as the backend does") {
  SECTION("password alone: AUTH") {
    auto config = config_of("backend: {password: s3cret}\n");
    auto args = router::migrate_arguments(config, config.shards[0].address, 0);
    CHECK(args == std::vector<std::string>{
                      "MIGRATE", "127.0.0.1", "7000", "", "0",
                      std::to_string(config.resharding.migrate_timeout.count()), "AUTH", "s3cret"});
  }
  SECTION("user and password: AUTH2") {
    auto config = config_of("backend: {username: mover, password: s3cret}\n");
    auto args = router::migrate_arguments(config, config.shards[0].address, 0);
    REQUIRE(args.size() == 9);
    CHECK(std::vector<std::string>(args.begin() + 6, args.end()) ==
          std::vector<std::string>{"AUTH2", "mover", "s3cret"});
    std::vector<std::string_view> keys = {"k"};
    auto expected = args;
    expected.insert(expected.end(), {"KEYS", "k"});
    CHECK(router::migrate_command(config, config.shards[0].address, 0, keys) == resp(expected));
  }
}

TEST_CASE("migrated: +OK and +NOKEY only") {
  CHECK(router::migrated("+OK\r\n"));
  CHECK(router::migrated("+NOKEY\r\n"));
  CHECK_FALSE(router::migrated("-IOERR error or timeout reading to target instance\r\n"));
  CHECK_FALSE(router::migrated("-ERR Target instance replied with error: NOAUTH\r\n"));
  CHECK_FALSE(router::migrated("-BUSYKEY Target key name already exists.\r\n"));
  CHECK_FALSE(router::migrated(":1\r\n"));
  CHECK_FALSE(router::migrated(""));
}
