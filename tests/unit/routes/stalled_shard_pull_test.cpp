// The migration gate (router/resharding/migration_gate.h) after a pull's MIGRATE timed out on a
// stopped source (findings 2026-12-06, F3). The router's timeout ends nothing on the shard: the
// MIGRATE still sits in the source's socket and runs once it wakes. So the pull's claim is
// kept until the source proves the connection's requests over (by answering them, or by
// answering CLIENT KILL ID <its id> on another connection): a MIGRATE the other way, let in
// before, would meet the late one at the shards, each waiting for the other until its timeout.
//
// A worker serves a move from three shards to four (shard3 added); shard1, the key's source,
// is a scripted shard (tests/support/scripted_shard.h) whose first connection answers its
// handshake (CLIENT ID: 7) and then reads nothing more, as a SIGSTOPped Redis would. The other
// shards are scripted ones that answer. The client's pulls go on the worker's pool, whose
// connections really connect.
#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "placement/topology.h"
#include "router/backend/draining_connections.h"
#include "router/plan/dispatch.h"
#include "router/resharding/migrate.h"
#include "router/resharding/moving_topology.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"
#include "tests/support/scripted_shard.h"

using namespace santral;
using router::Dispatched;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using test::ScriptedShard;

namespace {

void poll(boost::asio::io_context& io) {
  io.restart();
  io.poll();
}

std::string shards_yaml(const std::vector<const ScriptedShard*>& shards) {
  std::string yaml = "shards:\n";
  for (std::size_t s = 0; s < shards.size(); ++s)
    yaml += "  - {name: shard" + std::to_string(s) + ", address: " + shards[s]->address() + "}\n";
  return yaml + "timeouts: {request_ms: 300}\nhealth: {failures: 100}\n";
}

struct StoppedSource {
  ScriptedShard shard0{false}, source{true}, shard2{false}, added{false};
  placement::TopologyPtr from = placement::make_topology(
      config::parse_config(shards_yaml({&shard0, &source, &shard2}), "test.yaml"), 1);
  FakeWorkerServices worker{shards_yaml({&shard0, &source, &shard2, &added})};
  std::unique_ptr<FakeRequestContext> client;
  std::string key;

  StoppedSource() {
    worker.serve(router::moving_topology(*from, worker.topology(), 2, 1));
    client = std::make_unique<FakeRequestContext>(worker);
    client->pooled = true;
    const auto& to = worker.shard_map();
    for (int i = 0; key.empty(); ++i) {
      std::string k = "k" + std::to_string(i);
      if (from->map->shard_for_key(k) == 1 && to.shard_for_key(k) == 3) key = k;
      if (i > 100000) throw std::logic_error("no key moves from shard1 to shard3");
    }
  }
  // The client is owned here, not counted by references: what still waits for the stopped
  // source's proof (a pull's claim, holding the client) must let go of it before it goes, so
  // the stop ends first (else the io_context's shutdown frees those waiters after the client).
  ~StoppedSource() {
    source.hold_kills(false);
    for (int n = 0; n < source.accepted(); ++n) source.wake(n);
    run_until(
        [&] {
          return router::DrainingConnections::of(worker.connections_io()).list().empty() &&
                 router::DrainingConnections::of(worker.io()).list().empty();
        },
        5000);
    client.reset();
    worker.close_pool();
  }

  bool run_until(const std::function<bool()>& ready, int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      poll(worker.io());
      poll(worker.connections_io());
      worker.pool().check_deadlines(std::chrono::steady_clock::now());  // the worker's tick
      if (ready()) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void run_for(int ms) {
    run_until([] { return false; }, ms);
  }

  // A GET of the key pulls it: its MIGRATE goes on the worker's connection to the source and
  // sits there unread; then the router's clock passes its deadline.
  void pull_times_out() {
    auto& pool = worker.pool();
    auto& connection = pool.shared(1, pool.default_profile(), client->state().id);
    REQUIRE(run_until(
        [&] { return connection.up() && connection.in_flight() == 0 && source.accepted() >= 1; },
        5000));
    CHECK(test::dispatch_request(*client, {"GET", key}) == Dispatched::AfterEarlierReplies);
    REQUIRE(run_until([&] { return source.unread(0) > 0; }, 5000));
    std::size_t migrate_bytes = source.unread(0);
    // A pull's MIGRATE is waited for as long as any MIGRATE (migrate.h), not request_ms.
    connection.check_deadlines(std::chrono::steady_clock::now() +
                               router::migrate_answer_timeout(worker.config()) +
                               std::chrono::milliseconds(100));
    run_for(200);
    CHECK(source.unread(0) == migrate_bytes);  // the MIGRATE has not run: it will, late
    const auto& outcome = client->pull_outcome();
    INFO("pull outcome: done " << outcome.done << ", error " << outcome.error);
  }

  // A MIGRATE the other way: from the added shard back to the source.
  router::MigrationGate::Claim reverse() const { return {{added.address()}, {source.address()}}; }
};

bool upper_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

TEST_CASE("a pull whose MIGRATE timed out on a stopped source keeps its claim on the gate") {
  StoppedSource move;
  move.source.hold_kills(true);  // no proof from the shard in this case
  move.pull_times_out();

  bool went = false;
  auto& gate = move.worker.migrations();
  gate.enter(move.worker.io(), move.reverse(), [&went] { went = true; });
  move.run_for(500);
  CHECK_FALSE(went);  // the late MIGRATE source -> added may still run
  if (went) gate.leave(move.reverse());
}

TEST_CASE("the claim is let go once CLIENT KILL ID of the source's connection is answered") {
  StoppedSource move;
  move.source.hold_kills(true);
  move.pull_times_out();
  bool went = false;
  auto& gate = move.worker.migrations();
  gate.enter(move.worker.io(), move.reverse(), [&went] { went = true; });
  move.run_for(100);
  CHECK_FALSE(went);

  REQUIRE(move.run_until([&] { return !move.source.kills().empty(); }, 3000));
  auto kill = move.source.kills().front();
  CHECK(kill.connection != 0);
  REQUIRE(kill.words.size() >= 4);
  CHECK(upper_equal(kill.words[2], "ID"));
  CHECK(kill.words[3] == "7");
  CHECK_FALSE(went);

  move.source.hold_kills(false);
  REQUIRE(move.run_until([&] { return went; }, 3000));
  gate.leave(move.reverse());
}

TEST_CASE("the claim is let go once the woken source answers the late MIGRATE") {
  StoppedSource move;
  move.source.hold_kills(true);  // the proof comes from the old connection itself
  move.pull_times_out();
  bool went = false;
  auto& gate = move.worker.migrations();
  gate.enter(move.worker.io(), move.reverse(), [&went] { went = true; });
  move.run_for(200);
  CHECK_FALSE(went);

  move.source.wake(0);
  REQUIRE(move.run_until([&] { return went; }, 3000));
  auto ran = move.source.commands(0);
  REQUIRE_FALSE(ran.empty());
  CHECK(upper_equal(ran.back()[0], "MIGRATE"));
  gate.leave(move.reverse());
}
