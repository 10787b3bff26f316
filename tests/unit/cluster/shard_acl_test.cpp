// Fencing at the shards (cluster.fence: acl) against a real redis-server: a router's own user
// is made once, never opened again by the router, and a router shut out cannot write.
#include <catch2/catch.hpp>

#include "router/cluster/shard_acl.h"
#include "tests/support/redis_server.h"

using namespace santral;
using namespace santral::router;
using santral::test::RedisClient;
using santral::test::RedisServer;

namespace {

config::Endpoint endpoint_of(const RedisServer& server) {
  return {"127.0.0.1", static_cast<std::uint16_t>(server.port())};
}

// A fresh connection as `account`: whether AUTH took it, and then whether SET did.
std::string write_as(const RedisServer& server, const ShardAccount& account) {
  RedisClient client(server.port(), 2000);
  auto auth = client.command({"AUTH", account.user, account.password});
  if (auth.is_error()) return auth.str;
  return client.command({"SET", "k", account.user}).str;
}

}  // namespace

TEST_CASE("shard ACL: a lease's account is made once and shut out for good") {
  RedisServer shard;
  auto admin_client = shard.client();
  REQUIRE(admin_client.command({"ACL", "SETUSER", "admin", "on", ">secret", "~*", "&*", "+@all"})
              .is_ok());
  ShardAcl acl({"admin", "secret"}, std::chrono::milliseconds(2000));
  auto account = lease_account("prod", 0x7a3f1c2b9d);
  CHECK(account.user == "santral:prod:7a3f1c2b9d");
  CHECK(account.password.size() == 32);
  CHECK(lease_account("prod", 1).password != lease_account("prod", 1).password);

  REQUIRE(acl.admit(endpoint_of(shard), account) == "");
  CHECK(write_as(shard, account) == "OK");

  // A connection the router holds when it is shut out is closed, and it cannot come back.
  RedisClient held(shard.port(), 2000);
  REQUIRE(held.command({"AUTH", account.user, account.password}).is_ok());
  REQUIRE(acl.shut_out(endpoint_of(shard), account.user) == "");
  bool closed = false;
  try {
    closed = held.command({"SET", "k", "late"}).is_error();
  } catch (const std::exception&) {
    closed = true;
  }
  CHECK(closed);
  CHECK(write_as(shard, account).find("WRONGPASS") != std::string::npos);
  CHECK(admin_client.command({"GET", "k"}).str == account.user);

  // The router admitting itself again (a restart of its agent, a new shard) opens nothing.
  REQUIRE(acl.admit(endpoint_of(shard), account) == "");
  CHECK(write_as(shard, account).find("WRONGPASS") != std::string::npos);
}

TEST_CASE("shard ACL: shutting out a user the shard has not seen keeps it out") {
  RedisServer shard;
  ShardAcl acl({"", ""}, std::chrono::milliseconds(2000));  // the default user, no password
  auto account = lease_account("prod", 42);
  REQUIRE(acl.shut_out(endpoint_of(shard), account.user) == "");
  REQUIRE(acl.admit(endpoint_of(shard), account) == "");
  CHECK(write_as(shard, account).find("WRONGPASS") != std::string::npos);
}

TEST_CASE("shard ACL: errors say which shard and what went wrong") {
  RedisServer shard;
  ShardAcl wrong({"admin", "nope"}, std::chrono::milliseconds(2000));
  auto account = lease_account("prod", 7);
  auto error = wrong.admit(endpoint_of(shard), account);
  CHECK(error.find(shard.address()) != std::string::npos);
  CHECK(error.find("backend.username/password") != std::string::npos);

  shard.pause();  // holds the connection, answers nothing
  ShardAcl acl({"", ""}, std::chrono::milliseconds(300));
  error = acl.shut_out(endpoint_of(shard), account.user);
  CHECK(error.find("did not answer within 300 ms") != std::string::npos);
  shard.resume();
}
