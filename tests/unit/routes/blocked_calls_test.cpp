// BlockedCalls: one client's blocking calls, each on a lent connection (from a real pool that
// never connects) that goes back to the pool when its call is answered.
#include <catch2/catch.hpp>

#include "router/routes/blocked_calls.h"
#include "tests/support/fake_worker_services.h"

using namespace santral;
using router::BlockedCall;
using router::BlockedCalls;

TEST_CASE("an answered call's connection goes back to the pool, to be lent again") {
  test::FakeWorkerServices worker(test::kFourShards);
  auto& pool = worker.pool();
  auto profile = pool.default_profile();
  auto first = pool.lend(1, profile);
  auto second = pool.lend(1, profile);
  REQUIRE(first != second);

  BlockedCalls calls;
  CHECK(calls.empty());
  calls.add(BlockedCall{first, 1, 0, "*-1\r\n", {"a"}});
  calls.add(BlockedCall{second, 2, 0, "*-1\r\n", {"b"}});
  calls.answered(first.get(), pool);
  CHECK_FALSE(calls.empty());
  CHECK_FALSE(calls.ended_by_move(second.get()));
  // The connection it gave back is the next one lent for that shard.
  CHECK(pool.lend(1, profile) == first);

  auto left = calls.take_all();
  CHECK(calls.empty());
  REQUIRE(left.size() == 1);
  CHECK(left[0].connection == second);
  CHECK(left[0].slot == 2);
  CHECK(left[0].keys == std::vector<std::string>{"b"});
}
