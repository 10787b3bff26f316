// MoveDriver, where it runs without a shard: plan() and approve()/abort() as ledger writes,
// a record whose maps do not load, and the end of a move putting the map in force alone. Taking
// a loadable move record (MoveDriver::take) samples the sources over sockets: not here.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <boost/asio/io_context.hpp>

#include "placement/diff.h"
#include "placement/topology.h"
#include "router/resharding/local_ledger.h"
#include "router/resharding/migration_gate.h"
#include "router/resharding/move_driver.h"
#include "router/resharding/moving_topology.h"
#include "tests/support/fake_move_host.h"
#include "tests/support/temp_dir.h"

using namespace santral;
using router::LocalLedger;
using router::MoveDocument;
using router::ReshardState;

namespace {

const std::string kThree =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "  - {name: shard2, address: 127.0.0.1:7002}\n";
const std::string kFour = kThree + "  - {name: shard3, address: 127.0.0.1:7003}\n";

placement::TopologyPtr topology(const std::string& text, std::uint64_t version = 1) {
  return placement::make_topology(config::parse_config(text, "test.yaml"), version);
}

struct Driver {
  test::TempDir dir;
  boost::asio::io_context io;
  test::FakeMoveHost host;
  LocalLedger ledger{dir.path() / "santral.yaml", ""};
  router::MoveDriver driver{io, host, ledger, "santral"};
  std::optional<router::LedgerMove> recorded;
  int changes = 0;

  Driver() {
    ledger.load();
    ledger.set_in_force_text(kThree);
    host.serve(topology(kThree));
    // What the ledger records is kept here, not taken by the driver (that would sample).
    ledger.on_change([this](const std::optional<router::LedgerMove>& move) {
      ++changes;
      recorded = move;
    });
  }
  std::pair<bool, std::string> plan(const std::string& to_text) {
    std::pair<bool, std::string> out{false, "<not called>"};
    driver.plan(topology(to_text), to_text, [&out](bool ok, std::string message) {
      out = {ok, std::move(message)};
    });
    return out;
  }
};

}  // namespace

TEST_CASE("MoveDriver::plan proposes a planned move from the map in force") {
  Driver d;
  auto [ok, message] = d.plan(kFour);
  CHECK(ok);
  auto units = placement::moving_units(*topology(kThree)->map, *topology(kFour)->map).size();
  REQUIRE(units > 0);
  CHECK(message.find("planned a move of " + std::to_string(units) + " unit") != std::string::npos);
  CHECK(message.find("SANTRAL RESHARD APPROVE") != std::string::npos);
  REQUIRE(d.recorded);
  CHECK(d.recorded->document.phase == MoveDocument::Phase::Planned);
  CHECK(d.recorded->document.from_text == kThree);
  CHECK(d.recorded->document.to_text == kFour);
  CHECK(d.recorded->document.proposed_by == "santral");
  CHECK(d.recorded->document.epoch == 0);
  // Nothing switched: the old map serves until APPROVE.
  CHECK(d.host.switches == 0);
  CHECK(d.driver.state() == ReshardState::Idle);

  SECTION("approve and abort are the ledger's") {
    std::string error = "<not called>";
    d.driver.approve([&error](std::string e) { error = std::move(e); });
    CHECK(error.empty());
    REQUIRE(d.recorded);
    CHECK(d.recorded->document.phase == MoveDocument::Phase::Moving);
    CHECK(d.recorded->document.epoch == 1);
    d.driver.abort([&error](std::string e) { error = std::move(e); });
    CHECK(error.empty());
    REQUIRE(d.recorded);
    CHECK(d.recorded->document.phase == MoveDocument::Phase::Aborting);
    CHECK(d.recorded->document.epoch == 2);
  }
}

TEST_CASE("MoveDriver::plan with resharding.auto_approve records the move as moving") {
  Driver d;
  auto to = kFour + "resharding: {auto_approve: true}\n";
  auto [ok, message] = d.plan(to);
  CHECK(ok);
  CHECK(message.find("resharding.auto_approve") != std::string::npos);
  REQUIRE(d.recorded);
  CHECK(d.recorded->document.phase == MoveDocument::Phase::Moving);
  CHECK(d.recorded->document.epoch == 1);
}

TEST_CASE("MoveDriver::plan: a ledger that cannot write refuses with its error") {
  test::TempDir dir;
  boost::asio::io_context io;
  test::FakeMoveHost host;
  host.serve(topology(kThree));
  LocalLedger ledger(dir.path() / "santral.yaml", "no/such/folder/state.json");
  ledger.load();
  router::MoveDriver driver(io, host, ledger, "santral");
  std::pair<bool, std::string> out{true, ""};
  driver.plan(topology(kFour), kFour, [&out](bool ok, std::string m) { out = {ok, m}; });
  CHECK_FALSE(out.first);
  CHECK(out.second.find(ledger.path().string()) != std::string::npos);
  CHECK_FALSE(ledger.has_move());
}

TEST_CASE("MoveDriver::take refuses a record whose maps do not load") {
  Driver d;
  router::LedgerMove record;
  record.id = 1;
  record.revision = 1;
  record.document.phase = MoveDocument::Phase::Moving;
  record.document.epoch = 1;
  record.document.from_text = kThree;
  record.document.to_text = "shards: [not, a config";
  d.driver.take(record);
  CHECK(d.driver.state() == ReshardState::Idle);
  CHECK_FALSE(d.driver.under_way());
  CHECK(d.host.switches == 0);
}

TEST_CASE("MoveDriver: the end of a move puts the map in force alone") {
  Driver d;
  auto from = topology(kThree);
  auto to = topology(kFour);
  auto moving = std::make_shared<placement::Topology>(*router::moving_topology(*from, *to, 5, 1));
  moving->map_version = 77;
  d.host.serve(moving);
  d.ledger.set_in_force_text(kFour);  // as the ledger's finish() leaves it
  d.driver.take(std::nullopt);
  CHECK(d.host.switches == 1);
  const auto& now = d.host.serving();
  CHECK_FALSE(now->move);
  CHECK(now->version == d.host.version());
  CHECK(now->map_version == 77);
  CHECK(now->salt_naming == moving->salt_naming);
  REQUIRE(now->map->shards().size() == 4);
  for (int i = 0; i < 500; ++i) {
    std::string key = "k" + std::to_string(i);
    CHECK(now->map->shard_for_key(key) == to->map->shard_for_key(key));
  }
  CHECK(d.driver.state() == ReshardState::Idle);
  CHECK(d.driver.status().map_version == 77);

  SECTION("a topology without a move is left as it is") {
    d.driver.take(std::nullopt);
    CHECK(d.host.switches == 1);
  }
}
