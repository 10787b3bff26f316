// forward_evalsha through a fake client: an EVALSHA of a script Santral has seen loads it on
// the shard first, and a NOSCRIPT from the shard is retried as EVAL with the body.
#include <catch2/catch.hpp>

#include <string>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/routes/script_cache.h"
#include "router/routes/scripts.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using test::PlannedRequest;

namespace {

const std::string kBody = "return redis.call('GET', KEYS[1])";

std::size_t bytes_of(std::vector<std::string_view> args) {
  std::string out;
  protocol::RespWriter(out).command(args);
  return out.size();
}

}  // namespace

TEST_CASE("an EVALSHA of an unseen script is not Santral's to send") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  PlannedRequest evalsha(client, {"EVALSHA", router::ScriptCache::sha1_hex(kBody), "1", "k"});
  CHECK_FALSE(router::forward_evalsha(evalsha.routed(), *evalsha.plan().shard));
  CHECK(client.opened_slots() == 0);
  CHECK(client.sent_current.empty());
}

TEST_CASE("NOSCRIPT from the shard is retried once as EVAL with the body, to the same shard") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  worker.remember_script(kBody);
  std::string sha = router::ScriptCache::sha1_hex(kBody);
  PlannedRequest evalsha(client, {"EVALSHA", sha, "1", "k"});
  std::size_t shard = *evalsha.plan().shard;
  REQUIRE(router::forward_evalsha(evalsha.routed(), shard));
  REQUIRE(client.sent_current.size() == 1);
  auto sent = client.sent_current[0];
  auto requests = client.requests_to(shard);

  // The shard lost the script (a restart): the sink sends EVAL instead, and the client waits.
  sent.sink->deliver(sent.slot, sent.fragment, "-NOSCRIPT No matching script.\r\n");
  CHECK_FALSE(client.answer(sent.slot));
  CHECK(client.requests_to(shard) == requests + 1);
  CHECK(client.bytes_to(shard) == bytes_of({"EVAL", kBody, "1", "k"}));
  CHECK_FALSE(client.connection(shard).has_script(sha));  // to be loaded again next time

  // Any other reply is the client's.
  sent.sink->deliver(sent.slot, sent.fragment, "$2\r\nok\r\n");
  CHECK(client.answer(sent.slot) == "$2\r\nok\r\n");
}

TEST_CASE("EVALSHA_RO is retried as EVAL_RO") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  worker.remember_script(kBody);
  PlannedRequest evalsha(client, {"EVALSHA_RO", router::ScriptCache::sha1_hex(kBody), "1", "k"});
  std::size_t shard = *evalsha.plan().shard;
  REQUIRE(router::forward_evalsha(evalsha.routed(), shard));
  auto sent = client.sent_current.at(0);
  sent.sink->deliver(sent.slot, sent.fragment, "-NOSCRIPT No matching script.\r\n");
  CHECK(client.bytes_to(shard) == bytes_of({"EVAL_RO", kBody, "1", "k"}));
}
