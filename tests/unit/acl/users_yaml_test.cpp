#include <catch2/catch.hpp>

#include <string>

#include "config/acl/acl_describe.h"
#include "config/acl/password_hash.h"
#include "config/config.h"
#include "config/config_error.h"

using namespace santral::config;

namespace {

const std::string kShards = "shards:\n  - {name: a, address: 127.0.0.1:7001}\n";

Config parsed(const std::string& users) {
  return parse_config(kShards + users, "santral.yaml");
}

ConfigError error_of(const std::string& users) {
  try {
    parsed(users);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("config loaded but should have been rejected:\n" << users);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("users: without rules a user may run everything, as before") {
  auto config = parsed("users:\n  - {name: alice, password: wonderland}\n");
  REQUIRE(config.users.size() == 1);
  const auto& alice = *config.users[0].permissions;
  CHECK(alice.unrestricted());
  CHECK(password_matches(alice, "wonderland"));
  CHECK_FALSE(password_matches(alice, "other"));
}

TEST_CASE("users: rules, password_sha256, and passwords inside the rules") {
  std::string hash = password_hash_hex(hash_password("abc"));
  auto config = parsed(
      "users:\n"
      "  - {name: app, password: pw, rules: \"on +@read ~app:*\"}\n"
      "  - {name: hashed, password_sha256: " +
      hash +
      ", rules: \"on +get\"}\n"
      "  - {name: inline, rules: \"on >inside +@all ~*\"}\n");
  const auto& app = *config.users[0].permissions;
  CHECK_FALSE(app.unrestricted());
  CHECK(password_matches(app, "pw"));
  CHECK(describe_user("app", app) == "user app on #" + password_hash_hex(hash_password("pw")) +
                                         " ~app:* resetchannels -@all +@read");
  CHECK(password_matches(*config.users[1].permissions, "abc"));
  CHECK(password_matches(*config.users[2].permissions, "inside"));
}

TEST_CASE("users: a bad rule names the file, the line and the key") {
  auto e = error_of(
      "users:\n  - {name: a, password: p}\n  - {name: b, password: p, rules: \"+nosuch\"}\n");
  CHECK(e.line() == 5);
  CHECK(e.key() == "users[1].rules");
  CHECK(std::string(e.what()).find("Error in ACL SETUSER modifier '+nosuch': Unknown command or "
                                   "category name in ACL") != std::string::npos);
  CHECK(error_of("users:\n  - {name: a, password_sha256: nothex}\n").key() ==
        "users[0].password_sha256");
  CHECK(error_of("users:\n  - {name: a}\n").key() == "users[0]");
  CHECK(error_of("users:\n  - {name: a, rules: \"(+get)\"}\n").key() == "users[0].rules");
}

TEST_CASE("users: limits, wait_ms with a rate and never without one") {
  auto config = parsed(
      "users:\n  - {name: a, password: p, limits: {requests_per_s: 50, burst: 5, wait_ms: 200}}\n");
  REQUIRE(config.users.size() == 1);
  CHECK(config.users[0].limits.requests_per_s == 50);
  CHECK(config.users[0].limits.burst == 5);
  CHECK(config.users[0].limits.wait_ms == 200);
  auto e = error_of("users:\n  - {name: a, password: p, limits: {wait_ms: 200}}\n");
  CHECK(e.line() == 4);
  CHECK(e.key() == "users[0].limits.wait_ms");
  CHECK(std::string(e.what()).find("wait_ms needs requests_per_s") != std::string::npos);
}
