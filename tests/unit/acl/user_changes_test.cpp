#include <catch2/catch.hpp>

#include <string>

#include "config/acl/user_changes.h"
#include "config/config.h"

using namespace santral::config;

namespace {

Config with_users(const std::string& users) {
  return parse_config("shards:\n  - {name: a, address: 127.0.0.1:7001}\n" + users, "santral.yaml");
}

}  // namespace

TEST_CASE("user changes: none, added, removed, changed, and the default user's password") {
  auto before = with_users(
      "users:\n"
      "  - {name: ops, password: a}\n"
      "  - {name: app, password: b, rules: 'on +@all ~app:*'}\n");
  CHECK(describe_user_changes(before, before).empty());
  auto after = with_users(
      "users:\n"
      "  - {name: ops, password: a}\n"
      "  - {name: app, password: b, rules: 'on +@read ~app:*'}\n"
      "  - {name: reporter, password: c}\n");
  CHECK(describe_user_changes(before, after) == "added: reporter; changed: app");
  CHECK(describe_user_changes(after, before) == "removed: reporter; changed: app");
  auto password = with_users("password: p\n");
  CHECK(describe_user_changes(with_users(""), password) == "changed: default");
}
