// ACL subcommands answered here, through a fake client, for the users of the config.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::bulk;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

const std::string kUsers = test::kFourShards +
                           "users:\n"
                           "  - {name: app, password: pw, rules: \"on +@read ~app:*\"}\n"
                           "  - {name: admin, password: root}\n";

}  // namespace

TEST_CASE("ACL USERS lists the config's users") {
  FakeWorkerServices worker(kUsers);
  FakeRequestContext client(worker);
  auto users = test::ask_local(client, {"ACL", "USERS"});
  CHECK(users.find(bulk("app")) != std::string::npos);
  CHECK(users.find(bulk("admin")) != std::string::npos);
  CHECK(users.find(bulk("nobody")) == std::string::npos);
}

TEST_CASE("ACL DRYRUN judges a command by the user's rules, without running it") {
  FakeWorkerServices worker(kUsers);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"ACL", "DRYRUN", "app", "GET", "app:1"}) == "+OK\r\n");
  CHECK(test::ask_local(client, {"ACL", "DRYRUN", "app", "GET", "other:1"}) ==
        bulk("This user has no permissions to access the 'other:1' key"));
  CHECK(test::ask_local(client, {"ACL", "DRYRUN", "app", "SET", "app:1", "v"}) ==
        bulk("This user has no permissions to run the 'set' command"));
  CHECK(test::ask_local(client, {"ACL", "DRYRUN", "admin", "SET", "other:1", "v"}) == "+OK\r\n");
  CHECK(test::ask_local(client, {"ACL", "DRYRUN", "nobody", "GET", "k"}) ==
        "-ERR User 'nobody' not found\r\n");
  CHECK(client.opened_slots() == 0);
}

TEST_CASE("a failed AUTH lands in ACL LOG, which ACL LOG RESET empties") {
  FakeWorkerServices worker(kUsers);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"ACL", "LOG"}) == "*0\r\n");
  CHECK(test::ask_local(client, {"AUTH", "app", "wrong"}).starts_with("-WRONGPASS"));
  auto log = test::ask_local(client, {"ACL", "LOG"});
  CHECK(log.starts_with("*1\r\n"));
  CHECK(log.find(bulk("app")) != std::string::npos);   // the user named
  CHECK(log.find(bulk("auth")) != std::string::npos);  // the reason
  CHECK(test::ask_local(client, {"ACL", "LOG", "RESET"}) == "+OK\r\n");
  CHECK(test::ask_local(client, {"ACL", "LOG"}) == "*0\r\n");
}

TEST_CASE("AUTH as a configured user makes the client that user") {
  FakeWorkerServices worker(kUsers);
  FakeRequestContext client(worker);
  client.state().authenticated = false;
  CHECK(test::ask_local(client, {"AUTH", "app", "pw"}) == "+OK\r\n");
  CHECK(client.state().user == "app");
  CHECK(client.state().authenticated);
  CHECK(test::ask_local(client, {"ACL", "WHOAMI"}) == bulk("app"));
}
