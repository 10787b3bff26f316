// restore_local_moves: where a router alone starts from its state file, with a fake MoveHost
// whose topologies come from config text (no sockets, no shards).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "placement/topology.h"
#include "router/resharding/local_start.h"
#include "router/resharding/migration_gate.h"
#include "tests/support/fake_move_host.h"
#include "tests/support/temp_dir.h"

using namespace santral;
using router::LocalLedger;

namespace {

const std::string kThree =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "  - {name: shard2, address: 127.0.0.1:7002}\n";
const std::string kFour = kThree + "  - {name: shard3, address: 127.0.0.1:7003}\n";

struct Start {
  test::TempDir dir;
  std::filesystem::path config_path = dir.path() / "santral.yaml";
  test::FakeMoveHost host{100};
  LocalLedger ledger{config_path, ""};

  void keep(const nlohmann::json& state) const { std::ofstream(ledger.path()) << state.dump(); }
  router::LocalStart start(const std::string& file_text) {
    auto file = placement::make_topology(config::parse_config(file_text, config_path), 1);
    return router::restore_local_moves(ledger, host, file, config_path);
  }
};

std::vector<std::string> addresses(const placement::ShardMap& map) {
  std::vector<std::string> out;
  for (const auto& shard : map.shards()) out.push_back(shard.address.text());
  return out;
}

const std::vector<std::string> kThreeAddresses = {"127.0.0.1:7000", "127.0.0.1:7001",
                                                  "127.0.0.1:7002"};
const std::vector<std::string> kFourAddresses = {"127.0.0.1:7000", "127.0.0.1:7001",
                                                 "127.0.0.1:7002", "127.0.0.1:7003"};

}  // namespace

TEST_CASE("restore_local_moves: no state file, the config file's map is in force") {
  Start s;
  auto out = s.start(kThree);
  CHECK(out.error.empty());
  CHECK(out.file_in_force);
  CHECK_FALSE(out.kept_move);
  CHECK_FALSE(out.planned);
  REQUIRE(out.topology);
  CHECK(addresses(*out.topology->map) == kThreeAddresses);
  CHECK_FALSE(out.topology->move);
}

TEST_CASE("restore_local_moves: the map in force kept equals the file's") {
  Start s;
  s.keep({{"format", 2}, {"in_force", kThree}, {"move", nullptr}});
  auto out = s.start(kThree);
  CHECK(out.error.empty());
  CHECK(out.file_in_force);
  CHECK_FALSE(out.planned);
  CHECK(addresses(*out.topology->map) == kThreeAddresses);
}

TEST_CASE("restore_local_moves: a file whose map differs from the one in force plans a move") {
  Start s;
  s.keep({{"format", 2}, {"in_force", kThree}, {"move", nullptr}});
  auto out = s.start(kFour);
  CHECK(out.error.empty());
  CHECK_FALSE(out.file_in_force);
  CHECK_FALSE(out.kept_move);
  // Serves the map in force, where the keys are...
  REQUIRE(out.topology);
  CHECK(addresses(*out.topology->map) == kThreeAddresses);
  CHECK_FALSE(out.topology->move);
  // ...and plans the file's.
  REQUIRE(out.planned);
  CHECK(addresses(*out.planned->map) == kFourAddresses);
  // Some key really has another owner in the planned map (it is a move, not a no-op).
  bool moves = false;
  for (int i = 0; i < 1000 && !moves; ++i) {
    std::string key = "k" + std::to_string(i);
    moves = out.topology->map->shards()[out.topology->map->shard_for_key(key)].address.text() !=
            out.planned->map->shards()[out.planned->map->shard_for_key(key)].address.text();
  }
  CHECK(moves);
}

TEST_CASE("restore_local_moves: a state file with a move under way resumes it") {
  Start s;
  nlohmann::json move = {
      {"id", 4}, {"epoch", 3}, {"from", kThree}, {"to", kFour}, {"proposed_by", "santral"}};
  SECTION("moving: serves the moving topology toward the destination") {
    move["state"] = "moving";
    s.keep({{"format", 2}, {"in_force", kThree}, {"epochs", 3}, {"moves", 4}, {"move", move}});
    auto out = s.start(kFour);
    CHECK(out.error.empty());
    CHECK_FALSE(out.file_in_force);
    CHECK_FALSE(out.planned);
    REQUIRE(out.kept_move);
    CHECK(out.kept_move->id == 4);
    CHECK(out.kept_move->document.epoch == 4);  // resumed: the next epoch
    REQUIRE(out.topology);
    REQUIRE(out.topology->move);
    CHECK(out.topology->move->epoch == out.kept_move->document.epoch);
    CHECK(addresses(*out.topology->map) == kFourAddresses);
    CHECK(addresses(*out.topology->move->from) == kThreeAddresses);
    // Versions come from the host.
    CHECK(out.topology->version > 100);
    CHECK(out.topology->version <= s.host.version());
    // A key whose owner differs is looked for at its old owner.
    auto from = placement::make_topology(config::parse_config(kThree, "x.yaml"), 1);
    int moved = 0;
    for (int i = 0; i < 1000; ++i) {
      std::string key = "k" + std::to_string(i);
      std::size_t owner = out.topology->map->shard_for_key(key);
      std::size_t was = from->map->shard_for_key(key);
      auto source = out.topology->move->source_of(key, owner);
      if (was == owner) {
        CHECK_FALSE(source);
      } else {
        REQUIRE(source);
        CHECK(*source == was);
        ++moved;
      }
    }
    CHECK(moved > 0);
  }
  SECTION("aborting: serves the moving topology back to the origin") {
    move["state"] = "aborting";
    s.keep({{"format", 2}, {"in_force", kThree}, {"epochs", 3}, {"moves", 4}, {"move", move}});
    auto out = s.start(kFour);
    CHECK(out.error.empty());
    REQUIRE(out.kept_move);
    REQUIRE(out.topology->move);
    // The origin's three shards, and shard3 draining.
    REQUIRE(out.topology->map->shards().size() == 4);
    CHECK(out.topology->map->shards()[3].address.text() == "127.0.0.1:7003");
    CHECK(out.topology->map->shards()[3].draining);
    CHECK(addresses(*out.topology->move->from) == kFourAddresses);
  }
  SECTION("planned: serves the origin, the move waits for APPROVE") {
    move["state"] = "planned";
    s.keep({{"format", 2}, {"in_force", kThree}, {"epochs", 3}, {"moves", 4}, {"move", move}});
    auto out = s.start(kFour);
    CHECK(out.error.empty());
    REQUIRE(out.kept_move);
    CHECK(out.kept_move->document.phase == router::MoveDocument::Phase::Planned);
    CHECK_FALSE(out.topology->move);
    CHECK(addresses(*out.topology->map) == kThreeAddresses);
  }
}

TEST_CASE("restore_local_moves: a bad state file or kept text is an error naming the file") {
  Start s;
  std::string name = s.ledger.path().string();
  std::string bad = "shards: [this is not, a config";
  SECTION("not a state file") {
    std::ofstream(s.ledger.path()) << "{oops";
    auto out = s.start(kThree);
    CHECK(out.error.find(name) != std::string::npos);
  }
  SECTION("the config in force does not load") {
    s.keep({{"format", 2}, {"in_force", bad}, {"move", nullptr}});
    auto out = s.start(kThree);
    CHECK(out.error.find(name) != std::string::npos);
    CHECK(out.error.find("the config in force") != std::string::npos);
    CHECK_FALSE(out.file_in_force);
    CHECK_FALSE(out.planned);
  }
  SECTION("the move's destination does not load") {
    s.keep({{"format", 2},
            {"in_force", kThree},
            {"move", {{"state", "moving"}, {"from", kThree}, {"to", bad}}}});
    auto out = s.start(kThree);
    CHECK(out.error.find(name) != std::string::npos);
    CHECK(out.error.find("the config the move goes to") != std::string::npos);
    CHECK_FALSE(out.kept_move);
  }
  SECTION("the naming config does not load") {
    s.keep({{"format", 2}, {"in_force", kThree}, {"naming", bad}, {"move", nullptr}});
    auto out = s.start(kThree);
    CHECK(out.error.find(name) != std::string::npos);
    CHECK(out.error.find("salted counters") != std::string::npos);
  }
}
