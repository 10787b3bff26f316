#include <catch2/catch.hpp>

#include "config/acl/acl_rules.h"
#include "config/acl/password_hash.h"
#include "protocol/command_table.h"

using namespace santral::config;
using santral::protocol::find_command;
using santral::protocol::find_subcommand;

namespace {

Permissions user_with(std::string_view rules) {
  Permissions user = new_acl_user();
  std::string error = apply_acl_rules(user, rules);
  INFO(error);
  REQUIRE(error.empty());
  return user;
}

std::string error_of(std::string_view rules) {
  Permissions user = new_acl_user();
  return apply_acl_rules(user, rules);
}

bool allows(const Permissions& user, std::string_view name) {
  auto bar = name.find('|');
  const auto* spec = find_command(name.substr(0, bar));
  REQUIRE(spec != nullptr);
  if (bar != std::string_view::npos) spec = find_subcommand(*spec, name.substr(bar + 1));
  REQUIRE(spec != nullptr);
  return user.allows(*spec);
}

}  // namespace

TEST_CASE("acl rules: a new user is off and may do nothing") {
  Permissions user = new_acl_user();
  CHECK_FALSE(user.enabled);
  CHECK_FALSE(allows(user, "get"));
  CHECK_FALSE(user.all_keys);
  CHECK_FALSE(user.all_channels);
  CHECK(user.passwords.empty());
}

TEST_CASE("acl rules: flags and passwords") {
  CHECK(user_with("on").enabled);
  CHECK_FALSE(user_with("on off").enabled);
  CHECK(user_with("nopass").nopass);
  auto user = user_with(">secret >other");
  CHECK(user.passwords.size() == 2);
  CHECK(password_matches(user, "secret"));
  CHECK(password_matches(user, "other"));
  CHECK_FALSE(password_matches(user, "wrong"));
  CHECK(user_with(">secret <secret").passwords.empty());
  CHECK(user_with(">secret resetpass").passwords.empty());
  CHECK_FALSE(user_with("nopass >secret").nopass);
  CHECK(user_with(">a nopass").passwords.empty());
  std::string hex = password_hash_hex(hash_password("abc"));
  CHECK(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(password_matches(user_with("#" + hex), "abc"));
  CHECK(user_with("#" + hex + " !" + hex).passwords.empty());
}

TEST_CASE("acl rules: commands and categories apply left to right") {
  auto user = user_with("+@all -@write");
  CHECK(allows(user, "get"));
  CHECK_FALSE(allows(user, "set"));
  CHECK_FALSE(user.all_commands);
  CHECK(user.future_commands);
  user = user_with("-@all +get");
  CHECK(allows(user, "get"));
  CHECK_FALSE(allows(user, "mget"));
  user = user_with("+@read -get");
  CHECK(allows(user, "mget"));
  CHECK_FALSE(allows(user, "get"));
  CHECK(user_with("allcommands").all_commands);
  CHECK_FALSE(allows(user_with("allcommands nocommands"), "get"));
  CHECK(allows(user_with("+GET"), "get"));
  CHECK(allows(user_with("+@READ"), "get"));
}

TEST_CASE("acl rules: subcommands") {
  auto user = user_with("+config|get");
  CHECK(allows(user, "config|get"));
  CHECK_FALSE(allows(user, "config|set"));
  user = user_with("+config -config|set");
  CHECK(allows(user, "config|get"));
  CHECK_FALSE(allows(user, "config|set"));
  CHECK(allows(user_with("+@admin"), "config|set"));
  CHECK(allows(user_with("+@admin"), "santral|reload"));
}

TEST_CASE("acl rules: keys and channels") {
  auto user = user_with("~a* %R~r* %W~w* %RW~b");
  REQUIRE(user.keys.size() == 4);
  CHECK(user.keys[0] == AclKeyPattern{"a*", kAllKeyAccess});
  CHECK(user.keys[1] == AclKeyPattern{"r*", kReadKeys});
  CHECK(user.keys[2] == AclKeyPattern{"w*", kWriteKeys});
  CHECK(user.keys[3] == AclKeyPattern{"b", kAllKeyAccess});
  CHECK(user_with("~a ~a").keys.size() == 1);
  CHECK(user_with("~a allkeys").all_keys);
  CHECK(user_with("~a ~*").keys.empty());
  CHECK_FALSE(user_with("allkeys resetkeys").all_keys);
  user = user_with("&news.* &alerts");
  CHECK(user.channels == std::vector<std::string>{"news.*", "alerts"});
  CHECK(user_with("allchannels").all_channels);
  CHECK(user_with("&*").all_channels);
  CHECK_FALSE(user_with("&* resetchannels").all_channels);
  user = user_with("on >pw +@all ~* &* reset");
  CHECK(user == new_acl_user());
}

TEST_CASE("acl rules: errors in Redis 7.0's words") {
  CHECK(error_of("+nosuch") ==
        "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  CHECK(error_of("+@nosuch") ==
        "Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL");
  CHECK(error_of("foo") == "Error in ACL SETUSER modifier 'foo': Syntax error");
  CHECK(error_of("%X~a") == "Error in ACL SETUSER modifier '%X~a': Syntax error");
  CHECK(error_of("%~a") == "Error in ACL SETUSER modifier '%~a': Syntax error");
  CHECK(error_of("%RR~a") == "Error in ACL SETUSER modifier '%RR~a': Syntax error");
  CHECK(error_of("#abc") ==
        "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters "
        "and contain only lowercase hexadecimal characters");
  CHECK(error_of("<nopw") ==
        "Error in ACL SETUSER modifier '<nopw': The password you are trying to remove from the "
        "user does not exist");
  CHECK(error_of("~* ~a") ==
        "Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the "
        "'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start "
        "with an empty list of patterns");
  CHECK(error_of("&* &a").find("'allchannels' flag") != std::string::npos);
  CHECK(error_of("+config|get|x") ==
        "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is "
        "not supported");
  CHECK(error_of("+config|nosuch") ==
        "Error in ACL SETUSER modifier '+config|nosuch': Unknown command or category name in ACL");
  CHECK(error_of("-get|x") ==
        "Error in ACL SETUSER modifier '-get|x': Unknown command or category name in ACL");
  CHECK(error_of("(+get)").find("selectors") != std::string::npos);
  CHECK(error_of("+select|0").find("first-arg") != std::string::npos);
  CHECK(error_of("on +get bad +set") == "Error in ACL SETUSER modifier 'bad': Syntax error");
}
