// CLIENT subcommands answered here, through a fake client.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

// Runs `args` locally; the replies it added.
std::vector<std::string> ask(FakeRequestContext& client, std::vector<std::string> args) {
  auto before = client.replies.size();
  auto plan = test::run(client, std::move(args), router::run_local);
  REQUIRE(plan.kind == router::RouteKind::Local);
  return {client.replies.begin() + static_cast<std::ptrdiff_t>(before), client.replies.end()};
}

}  // namespace

TEST_CASE("CLIENT SETNAME names the client, GETNAME reads it; a name with a space is refused") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(ask(client, {"CLIENT", "GETNAME"}) == std::vector<std::string>{"$-1\r\n"});
  CHECK(ask(client, {"CLIENT", "SETNAME", "billing"}) == std::vector<std::string>{"+OK\r\n"});
  CHECK(client.state().name == "billing");
  CHECK(ask(client, {"CLIENT", "GETNAME"}) == std::vector<std::string>{"$7\r\nbilling\r\n"});

  auto refused = ask(client, {"CLIENT", "SETNAME", "two words"});
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].front() == '-');
  CHECK(client.state().name == "billing");
}

TEST_CASE("CLIENT ID and CLIENT INFO describe this client") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker, 4242);
  CHECK(ask(client, {"CLIENT", "ID"}) == std::vector<std::string>{":4242\r\n"});
  auto info = ask(client, {"CLIENT", "INFO"});
  REQUIRE(info.size() == 1);
  std::string line = client.describe() + "\n";
  CHECK(info[0] == "$" + std::to_string(line.size()) + "\r\n" + line + "\r\n");
}

TEST_CASE("CLIENT REPLY OFF silences the client until CLIENT REPLY ON, which is answered") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(ask(client, {"CLIENT", "REPLY", "OFF"}).empty());
  CHECK(client.silent);
  CHECK(client.state().reply_off);
  CHECK(ask(client, {"PING"}).empty());
  CHECK(ask(client, {"CLIENT", "REPLY", "ON"}) == std::vector<std::string>{"+OK\r\n"});
  CHECK_FALSE(client.silent);
  CHECK_FALSE(client.state().reply_off);

  CHECK(ask(client, {"CLIENT", "REPLY", "SKIP"}).empty());
  CHECK(client.state().skip_next);
  CHECK(ask(client, {"CLIENT", "REPLY", "MAYBE"}).empty());  // silent still: even its error
  client.set_silent(false);
  CHECK(ask(client, {"CLIENT", "REPLY", "MAYBE"}) ==
        std::vector<std::string>{"-ERR syntax error\r\n"});
}

TEST_CASE("CLIENT NO-EVICT takes ON or OFF only") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  CHECK(ask(client, {"CLIENT", "NO-EVICT", "on"}) == std::vector<std::string>{"+OK\r\n"});
  CHECK(ask(client, {"CLIENT", "NO-EVICT", "maybe"}) ==
        std::vector<std::string>{"-ERR syntax error\r\n"});
}
