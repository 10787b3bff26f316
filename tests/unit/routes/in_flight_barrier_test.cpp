// barrier_workers (router/routes/in_flight_barrier.h) over fake workers: `first` on each worker's
// thread, then the cross-shard writes in flight waited out, then a PING down each connection
// to the barrier's shards that may carry a request, and `done` on origin once every PING is back.
// Each worker's io() and origin are polled by the test; the connections (a real pool and real
// tracking lanes) live on an io_context that never runs: one with a request queued counts as
// carrying it, and stopping it answers everything it holds (the PING too).
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"
#include "router/routes/in_flight_barrier.h"
#include "router/routes/staged_writes.h"
#include "router/tracking/tracking_lanes.h"
#include "tests/support/fake_worker_services.h"
#include "tests/support/recorded_replies.h"

using namespace santral;
using test::FakeWorkerServices;

namespace {

constexpr std::string_view kGet = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";

using Replies = test::RecordedReplies;

// Runs what is ready on every io_context until nothing is left (each hop of the barrier is a
// post to the next one).
void settle(boost::asio::io_context& origin, const std::vector<FakeWorkerServices*>& workers) {
  for (bool ran = true; ran;) {
    ran = false;
    for (auto* worker : workers) {
      worker->io().restart();
      ran = worker->io().poll() > 0 || ran;
    }
    origin.restart();
    ran = origin.poll() > 0 || ran;
  }
}

void poll(boost::asio::io_context& io) {
  io.restart();
  io.poll();
}

// The shared connection of client 1 to `shard`, with a GET queued on it.
router::BackendConnection& carrying(FakeWorkerServices& worker, std::size_t shard,
                                    const boost::intrusive_ptr<Replies>& sink) {
  auto& pool = worker.pool();
  auto& connection = pool.shared(shard, pool.default_profile(), 1);
  connection.send(kGet, sink, 1, 0);
  REQUIRE(connection.in_flight() == 1);
  return connection;
}

}  // namespace

TEST_CASE("first runs on every worker's thread; done runs on origin once all passed the barrier") {
  FakeWorkerServices a(test::kFourShards), b(test::kFourShards);
  boost::asio::io_context origin;
  std::vector<FakeWorkerServices*> workers{&a, &b};
  std::vector<FakeWorkerServices*> first_ran;
  bool done = false;
  router::barrier_workers<FakeWorkerServices>(
      origin, workers, {}, [&first_ran](FakeWorkerServices& w) { first_ran.push_back(&w); },
      [&done] { done = true; });
  CHECK(first_ran.empty());  // posted to the workers, not run by the caller

  poll(a.io());
  CHECK(first_ran == std::vector<FakeWorkerServices*>{&a});
  poll(origin);
  CHECK_FALSE(done);  // b has not passed it yet
  poll(b.io());
  CHECK(first_ran == std::vector<FakeWorkerServices*>{&a, &b});
  CHECK_FALSE(done);  // passed, but done runs on origin
  poll(origin);
  CHECK(done);
}

TEST_CASE("the barrier waits for what first sent to the barrier's shard, until it is answered") {
  FakeWorkerServices worker(test::kFourShards);
  boost::asio::io_context origin;
  boost::intrusive_ptr<Replies> sink(new Replies);
  router::BackendConnection* sent_on = nullptr;
  bool done = false;
  // Over WorkerServices, as a server's peers are handed to it.
  std::vector<router::WorkerServices*> peers{&worker};
  router::barrier_workers<router::WorkerServices>(
      origin, peers, {1},
      [&](router::WorkerServices& w) {
        sent_on = &carrying(dynamic_cast<FakeWorkerServices&>(w), 1, sink);
      },
      [&done] { done = true; });
  settle(origin, {&worker});
  REQUIRE(sent_on != nullptr);
  CHECK_FALSE(done);
  CHECK(sent_on->in_flight() == 2);  // the GET, and the barrier's PING behind it

  sent_on->stop();  // both answered (with the shutting-down error)
  CHECK(sink->got.size() == 1);
  CHECK_FALSE(done);  // the answer goes home through origin
  settle(origin, {&worker});
  CHECK(done);
}

TEST_CASE("only the barrier's shards' connections are waited for; none given means all") {
  FakeWorkerServices worker(test::kFourShards);
  boost::asio::io_context origin;
  boost::intrusive_ptr<Replies> sink(new Replies);
  auto& busy = carrying(worker, 1, sink);
  std::vector<FakeWorkerServices*> workers{&worker};

  bool other_shards = false;
  router::barrier_workers<FakeWorkerServices>(origin, workers, {0, 2, 3}, nullptr,
                                              [&other_shards] { other_shards = true; });
  settle(origin, workers);
  CHECK(other_shards);  // shard 1's request is not in their way
  CHECK(busy.in_flight() == 1);

  bool outside = false;  // a shard the map does not have: nothing to wait for
  router::barrier_workers<FakeWorkerServices>(origin, workers, {99}, nullptr,
                                              [&outside] { outside = true; });
  settle(origin, workers);
  CHECK(outside);
  CHECK(busy.in_flight() == 1);

  bool all = false;
  router::barrier_workers<FakeWorkerServices>(origin, workers, {}, nullptr, [&all] { all = true; });
  settle(origin, workers);
  CHECK_FALSE(all);
  CHECK(busy.in_flight() == 2);
  busy.stop();
  settle(origin, workers);
  CHECK(all);
}

TEST_CASE("a tracking lane is waited for whichever shard the barrier is for") {
  FakeWorkerServices worker(test::kFourShards);
  boost::asio::io_context origin;
  boost::intrusive_ptr<Replies> sink(new Replies);
  auto& lane = worker.lanes().lane(0, 0, 1);
  lane.send(kGet, sink, 1, 0);
  REQUIRE(lane.in_flight() == 1);
  std::vector<FakeWorkerServices*> workers{&worker};

  bool outside = false;  // no shard of the map: the lanes carry nothing for it
  router::barrier_workers<FakeWorkerServices>(origin, workers, {99}, nullptr,
                                              [&outside] { outside = true; });
  settle(origin, workers);
  CHECK(outside);
  CHECK(lane.in_flight() == 1);

  bool done = false;  // shard 3: the lane to shard 0 may carry the client's commands for it
  router::barrier_workers<FakeWorkerServices>(origin, workers, {3}, nullptr,
                                              [&done] { done = true; });
  settle(origin, workers);
  CHECK_FALSE(done);
  CHECK(lane.in_flight() == 2);
  lane.stop();
  settle(origin, workers);
  CHECK(done);
}

TEST_CASE("cross-shard writes in flight end first; what their stages send is then waited for") {
  FakeWorkerServices worker(test::kFourShards);
  boost::asio::io_context origin;
  boost::intrusive_ptr<Replies> sink(new Replies);
  std::vector<FakeWorkerServices*> workers{&worker};
  auto& pool = worker.pool();
  auto& connection = pool.shared(2, pool.default_profile(), 1);

  auto write = router::staged_write_started(42);
  bool done = false;
  router::barrier_workers<FakeWorkerServices>(origin, workers, {2}, nullptr,
                                              [&done] { done = true; });
  settle(origin, workers);
  CHECK_FALSE(done);
  CHECK(connection.in_flight() == 0);  // no PING yet: the write has stages to send

  // Its last stage goes to shard 2, then it ends: that stage is waited for.
  connection.send(kGet, sink, 1, 0);
  router::staged_write_ended(42, write);
  settle(origin, workers);
  CHECK_FALSE(done);
  CHECK(connection.in_flight() == 2);
  connection.stop();
  settle(origin, workers);
  CHECK(done);
}

TEST_CASE("with no workers, done still runs on origin") {
  boost::asio::io_context origin;
  bool done = false;
  router::barrier_workers<FakeWorkerServices>(origin, {}, {}, nullptr, [&done] { done = true; });
  CHECK_FALSE(done);
  origin.poll();
  CHECK(done);
}
