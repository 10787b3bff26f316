// MigrationGate: no shard both sends and receives at once; waiters run in order, on their io.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/resharding/migration_gate.h"

using namespace santral;
using Claim = router::MigrationGate::Claim;

namespace {

// Runs what was posted to `io` (an io_context that ran out of work must be restarted).
std::size_t drain(boost::asio::io_context& io) {
  io.restart();
  return io.poll();
}

}  // namespace

TEST_CASE("MigrationGate runs claims that do not meet at once") {
  boost::asio::io_context io;
  router::MigrationGate gate;
  std::vector<std::string> ran;
  Claim ab{{"A"}, {"B"}}, ac{{"A"}, {"C"}}, db{{"D"}, {"B"}};
  gate.enter(io, ab, [&] { ran.push_back("ab"); });
  gate.enter(io, ac, [&] { ran.push_back("ac"); });  // same source: no cycle
  gate.enter(io, db, [&] { ran.push_back("db"); });  // same target: no cycle
  CHECK(ran == std::vector<std::string>{"ab", "ac", "db"});
  CHECK(drain(io) == 0);
}

TEST_CASE("MigrationGate holds the other direction until the first is left") {
  boost::asio::io_context io;
  router::MigrationGate gate;
  std::vector<std::string> ran;
  Claim ab{{"A"}, {"B"}}, ba{{"B"}, {"A"}};
  gate.enter(io, ab, [&] { ran.push_back("ab"); });
  gate.enter(io, ba, [&] { ran.push_back("ba"); });
  CHECK(ran == std::vector<std::string>{"ab"});
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab"});
  gate.leave(ab);
  // Posted to its io, not run inside leave().
  CHECK(ran == std::vector<std::string>{"ab"});
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab", "ba"});
  // And now A->B waits behind B->A.
  gate.enter(io, ab, [&] { ran.push_back("ab2"); });
  drain(io);
  CHECK(ran.back() == "ba");
  gate.leave(ba);
  drain(io);
  CHECK(ran.back() == "ab2");
}

TEST_CASE("MigrationGate: a cycle of three runs one link at a time, oldest first") {
  boost::asio::io_context io;
  router::MigrationGate gate;
  std::vector<std::string> ran;
  Claim ab{{"A"}, {"B"}}, bc{{"B"}, {"C"}}, ca{{"C"}, {"A"}};
  gate.enter(io, ab, [&] { ran.push_back("ab"); });
  gate.enter(io, bc, [&] { ran.push_back("bc"); });  // B receives from A: waits
  gate.enter(io, ca, [&] { ran.push_back("ca"); });  // A sends: waits
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab"});
  gate.leave(ab);
  drain(io);
  // B->C fits now; C->A does not (C receives from B).
  CHECK(ran == std::vector<std::string>{"ab", "bc"});
  gate.leave(bc);
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab", "bc", "ca"});
  gate.leave(ca);
}

TEST_CASE("MigrationGate: a newcomer does not overtake an older waiter it conflicts with") {
  boost::asio::io_context io;
  router::MigrationGate gate;
  std::vector<std::string> ran;
  Claim ab{{"A"}, {"B"}}, bd{{"B"}, {"D"}}, de{{"D"}, {"E"}};
  gate.enter(io, ab, [&] { ran.push_back("ab"); });
  gate.enter(io, bd, [&] { ran.push_back("bd"); });  // waits: B receives
  // D->E would fit on its own (D is nobody's source or target in flight), but D is the
  // waiting B->D's target: it waits behind it.
  gate.enter(io, de, [&] { ran.push_back("de"); });
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab"});
  gate.leave(ab);
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab", "bd"});
  gate.leave(bd);
  drain(io);
  CHECK(ran == std::vector<std::string>{"ab", "bd", "de"});
}
