#include <catch2/catch.hpp>

#include "config/acl/acl_describe.h"
#include "config/acl/acl_rules.h"

using namespace santral::config;

namespace {

std::string listed(std::string_view rules) {
  Permissions user = new_acl_user();
  REQUIRE(apply_acl_rules(user, rules).empty());
  return describe_user("u", user);
}

}  // namespace

// Each expected line is what redis-server 7.0.15 printed for the same ACL SETUSER.
TEST_CASE("acl describe: ACL LIST lines as Redis 7.0 writes them") {
  CHECK(listed("") == "user u off resetchannels -@all");
  CHECK(listed("on nopass +@all -@write ~a* %R~r* &ch*") ==
        "user u on nopass ~a* %R~r* resetchannels &ch* +@all -@write");
  CHECK(listed("+@all -@write +set") == "user u off resetchannels +@all -@write +set");
  CHECK(listed("-@all +get +set -get") == "user u off resetchannels -@all +set");
  CHECK(listed("+@all -@write +config|get") == "user u off resetchannels +@all -@write");
  CHECK(listed("-@all +config -config|get +@read -@read") ==
        "user u off resetchannels -@all +config -config|get");
  CHECK(listed("%R~a allkeys") == "user u off ~* resetchannels -@all");
  CHECK(listed("on >abc") ==
        "user u on #ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad "
        "resetchannels -@all");
  CHECK(listed("nopass ~a %R~ %W~* +@read +config|get") ==
        "user u off nopass ~a %R~ %W~* resetchannels -@all +@read +config|get");
  CHECK(describe_user("default", unrestricted_acl_user()) == "user default on ~* &* +@all");
}

TEST_CASE("acl describe: the described rules rebuild the same bitmap") {
  for (std::string_view rules :
       {"+@all -@dangerous -@admin +config|get", "-@all +@read +@write -set",
        "+@hash +@list -lpush +@keyspace -del", "+@all -@all +get"}) {
    Permissions user = new_acl_user();
    REQUIRE(apply_acl_rules(user, rules).empty());
    Permissions again = new_acl_user();
    REQUIRE(apply_acl_rules(again, describe_commands(user)).empty());
    CHECK(again.commands == user.commands);
  }
}
