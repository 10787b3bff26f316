// The per-thread registry of cross-shard writes in flight: which clients must wait, and
// what runs once the writes started before now have ended.
#include <catch2/catch.hpp>

#include "router/routes/staged_writes.h"

using namespace santral::router;

TEST_CASE("a client has a write in flight from started() until ended()") {
  CHECK_FALSE(staged_write_in_flight(7));
  auto first = staged_write_started(7);
  auto second = staged_write_started(7);
  CHECK(first != second);
  CHECK(staged_write_in_flight(7));
  CHECK_FALSE(staged_write_in_flight(8));
  staged_write_ended(7, first);
  CHECK(staged_write_in_flight(7));  // its other write still runs
  staged_write_ended(7, second);
  CHECK_FALSE(staged_write_in_flight(7));
}

TEST_CASE("after_staged_writes waits for the writes started before it, not later ones") {
  int ran = 0;
  after_staged_writes([&] { ++ran; });
  CHECK(ran == 1);  // none in flight: at once

  auto early = staged_write_started(1);
  after_staged_writes([&] { ++ran; });
  auto late = staged_write_started(2);
  CHECK(ran == 1);
  staged_write_ended(1, early);
  CHECK(ran == 2);  // the later write does not hold it
  staged_write_ended(2, late);
  CHECK(ran == 2);
}
