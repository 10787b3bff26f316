// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO through a fake client: Redis's checks,
// and the client's tracking settings they leave (BCAST, which opens lanes, is not here).
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

TEST_CASE("CLIENT TRACKING ON and OFF, as GETREDIR and TRACKINGINFO tell") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"CLIENT", "GETREDIR"}) == ":-1\r\n");
  CHECK(test::ask_local(client, {"CLIENT", "TRACKINGINFO"})
            .find("$5\r\nflags\r\n*1\r\n$3\r\noff\r\n") != std::string::npos);

  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "ON", "OPTIN", "NOLOOP"}) == "+OK\r\n");
  CHECK(client.state().tracking.on);
  CHECK(test::ask_local(client, {"CLIENT", "GETREDIR"}) == ":0\r\n");
  auto info = test::ask_local(client, {"CLIENT", "TRACKINGINFO"});
  CHECK(info.find("*3\r\n$2\r\non\r\n$5\r\noptin\r\n$6\r\nnoloop\r\n") != std::string::npos);

  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "OFF"}) == "+OK\r\n");
  CHECK_FALSE(client.state().tracking.on);
  CHECK(test::ask_local(client, {"CLIENT", "GETREDIR"}) == ":-1\r\n");
}

TEST_CASE("CLIENT TRACKING refuses what Redis refuses, and stays off") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "ON", "PREFIX", "user:"}) ==
        "-ERR PREFIX option requires BCAST mode to be enabled\r\n");
  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"}) ==
        "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n");
  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "ON", "REDIRECT", "999"}) ==
        "-ERR The client ID you want redirect to does not exist\r\n");
  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "MAYBE"}) == "-ERR syntax error\r\n");
  CHECK_FALSE(client.state().tracking.on);
}

TEST_CASE("REDIRECT to a client that exists is kept and shown") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker, 1);
  worker.shared().clients.add(2, 0);
  CHECK(test::ask_local(client, {"CLIENT", "TRACKING", "ON", "REDIRECT", "2"}) == "+OK\r\n");
  CHECK(test::ask_local(client, {"CLIENT", "GETREDIR"}) == ":2\r\n");
}

TEST_CASE("CLIENT CACHING YES only in OPTIN mode, NO only in OPTOUT mode") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"CLIENT", "CACHING", "YES"})
            .starts_with("-ERR CLIENT CACHING can be called"));
  test::ask_local(client, {"CLIENT", "TRACKING", "ON", "OPTIN"});
  CHECK(test::ask_local(client, {"CLIENT", "CACHING", "NO"}).front() == '-');
  CHECK_FALSE(client.state().tracking.caching.has_value());
  CHECK(test::ask_local(client, {"CLIENT", "CACHING", "YES"}) == "+OK\r\n");
  CHECK(client.state().tracking.caching == true);
  CHECK(test::ask_local(client, {"CLIENT", "TRACKINGINFO"}).find("$11\r\ncaching-yes\r\n") !=
        std::string::npos);
}
