// Commands Santral answers itself (run_local) through a fake client: what they answer and what
// they change in the client's state.
#include <catch2/catch.hpp>

#include <string>

#include "router/routes/script_cache.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

TEST_CASE("PING and ECHO are answered here, and PING refuses two messages") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"PING"}) == "+PONG\r\n");
  CHECK(test::ask_local(client, {"PING", "hello"}) == "$5\r\nhello\r\n");
  CHECK(test::ask_local(client, {"PING", "a", "b"}) ==
        "-ERR wrong number of arguments for 'ping' command\r\n");
  CHECK(test::ask_local(client, {"ECHO", "what I said"}) == "$11\r\nwhat I said\r\n");
  CHECK(client.opened_slots() == 0);
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.requests_to(s) == 0);
}

TEST_CASE("SELECT checks its argument against `databases` and changes the client's profile") {
  FakeWorkerServices worker(test::kFourShards + "databases: 4\n");
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"SELECT", "x"}).starts_with("-ERR value is not an integer"));
  auto out_of_range = test::ask_local(client, {"SELECT", "4"});
  CHECK(out_of_range.front() == '-');
  CHECK(out_of_range.find("0 to 3;") != std::string::npos);  // the highest one there is
  CHECK(test::ask_local(client, {"SELECT", "-1"}).front() == '-');
  CHECK(client.state().database == 0);
  CHECK(test::ask_local(client, {"SELECT", "3"}) == "+OK\r\n");
  CHECK(client.state().database == 3);
  CHECK(client.profile().database == 3);
}

TEST_CASE("QUIT answers OK and closes the connection after its replies") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK_FALSE(client.closing);
  CHECK(test::ask_local(client, {"QUIT"}) == "+OK\r\n");
  CHECK(client.closing);
}

TEST_CASE("AUTH: refused without a password to check, and by the configured one") {
  SECTION("no password configured") {
    FakeWorkerServices worker(test::kFourShards);
    FakeRequestContext client(worker);
    CHECK(test::ask_local(client, {"AUTH", "secret"})
              .starts_with("-ERR AUTH <password> called without"));
  }
  SECTION("password: secret") {
    FakeWorkerServices worker(test::kFourShards + "password: secret\n");
    FakeRequestContext client(worker);
    client.state().authenticated = false;
    CHECK(test::ask_local(client, {"AUTH", "wrong"}).starts_with("-WRONGPASS"));
    CHECK_FALSE(client.state().authenticated);
    CHECK(test::ask_local(client, {"AUTH", "secret"}) == "+OK\r\n");
    CHECK(client.state().authenticated);
    CHECK(client.state().user == "default");
  }
}

TEST_CASE("HELLO 3 switches the client to RESP3 and answers a map; HELLO 4 is refused") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker, 77);
  CHECK(test::ask_local(client, {"HELLO", "4"}).starts_with("-NOPROTO"));
  CHECK(client.state().protocol == 2);
  CHECK(test::ask_local(client, {"HELLO", "3", "SETNAME", "bad name"}).front() == '-');
  CHECK(client.state().name.empty());

  auto hello = test::ask_local(client, {"HELLO", "3", "SETNAME", "app"});
  CHECK(hello.starts_with("%7\r\n"));
  CHECK(hello.find("$5\r\nproto\r\n:3\r\n") != std::string::npos);
  CHECK(hello.find("$2\r\nid\r\n:77\r\n") != std::string::npos);
  CHECK(client.state().protocol == 3);
  CHECK(client.profile().protocol == 3);
  CHECK(client.state().name == "app");
}

TEST_CASE("RESET puts the client back as it connected") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::ask_local(client, {"SELECT", "2"});
  test::ask_local(client, {"HELLO", "3", "SETNAME", "app"});
  client.set_silent(true);
  CHECK(test::ask_local(client, {"RESET"}) ==
        "+RESET\r\n");  // answered: RESET ends the silence too
  CHECK(client.state().database == 0);
  CHECK(client.state().protocol == 2);
  CHECK(client.state().name.empty());
  CHECK_FALSE(client.silent);
}

TEST_CASE("SCRIPT EXISTS answers from the scripts this worker has seen") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  std::string seen = router::ScriptCache::sha1_hex("return 1");
  std::string unseen = router::ScriptCache::sha1_hex("return 2");
  CHECK(test::ask_local(client, {"SCRIPT", "EXISTS", seen, unseen}) == "*2\r\n:0\r\n:0\r\n");
  worker.remember_script("return 1");
  CHECK(test::ask_local(client, {"SCRIPT", "EXISTS", seen, unseen}) == "*2\r\n:1\r\n:0\r\n");
}

TEST_CASE("ACL WHOAMI names the client's user") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"ACL", "WHOAMI"}) == "$7\r\ndefault\r\n");
  client.state().user = "reporting";
  CHECK(test::ask_local(client, {"ACL", "WHOAMI"}) == "$9\r\nreporting\r\n");
}
