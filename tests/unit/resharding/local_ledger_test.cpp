// local_ledger: the state file of a router alone, in a temporary folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "router/resharding/local_ledger.h"
#include "tests/support/temp_dir.h"

using namespace santral;
using router::LocalLedger;
using router::MoveDocument;
using router::StateFileError;
using Phase = MoveDocument::Phase;

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

MoveDocument document(Phase phase, std::string from, std::string to) {
  MoveDocument d;
  d.phase = phase;
  d.from_text = std::move(from);
  d.to_text = std::move(to);
  d.proposed_by = "santral";
  return d;
}

// Runs a ledger write and returns its error ("" when it took effect).
template <typename F>
std::string run(F&& write) {
  std::string error = "<not called>";
  write([&error](std::string e) { error = std::move(e); });
  return error;
}

}  // namespace

TEST_CASE("LocalLedger places its file by the setting") {
  CHECK(LocalLedger("/etc/santral/a.yaml", "").path() == "/etc/santral/a.yaml.reshard.json");
  CHECK(LocalLedger("/etc/santral/a.yaml", "state/m.json").path() == "/etc/santral/state/m.json");
  CHECK(LocalLedger("/etc/santral/a.yaml", "/var/lib/m.json").path() == "/var/lib/m.json");
}

TEST_CASE("LocalLedger without a file keeps nothing and writes nothing until a move") {
  test::TempDir dir;
  LocalLedger ledger(dir.path() / "santral.yaml", "");
  auto kept = ledger.load();
  CHECK_FALSE(kept.found);
  CHECK(kept.in_force_text.empty());
  CHECK_FALSE(kept.move);
  ledger.set_in_force_text("A");
  CHECK_FALSE(std::filesystem::exists(ledger.path()));
  CHECK(ledger.in_force_text() == "A");
}

TEST_CASE("LocalLedger round trip: a move survives a restart and ends in the file") {
  test::TempDir dir;
  auto config_path = dir.path() / "santral.yaml";
  LocalLedger ledger(config_path, "moves.json");
  ledger.load();
  ledger.set_in_force_text("A");
  int changes = 0;
  std::optional<router::LedgerMove> last;
  ledger.on_change([&](const std::optional<router::LedgerMove>& move) {
    ++changes;
    last = move;
  });

  REQUIRE(run([&](auto done) { ledger.propose(document(Phase::Planned, "A", "B"), done); }) == "");
  CHECK(changes == 1);
  REQUIRE(last);
  CHECK(last->id == 1);
  CHECK(last->document.epoch == 0);
  REQUIRE(std::filesystem::exists(dir.path() / "moves.json"));
  auto j = nlohmann::json::parse(read(dir.path() / "moves.json"));
  CHECK(j["format"] == 2);
  CHECK(j["in_force"] == "A");
  CHECK(j["move"]["state"] == "planned");
  CHECK(j["move"]["to"] == "B");

  SECTION("a planned move comes back planned") {
    LocalLedger again(config_path, "moves.json");
    auto kept = again.load();
    CHECK(kept.found);
    CHECK(kept.in_force_text == "A");
    REQUIRE(kept.move);
    CHECK(kept.move->document.phase == Phase::Planned);
    CHECK(kept.move->document.from_text == "A");
    CHECK(kept.move->document.to_text == "B");
    CHECK(kept.move->id == 1);
    CHECK(again.has_move());
  }

  REQUIRE(run([&](auto done) { ledger.approve(done); }) == "");
  REQUIRE(last);
  CHECK(last->document.phase == Phase::Moving);
  CHECK(last->document.epoch == 1);
  // A second proposal while moving is refused and changes nothing.
  CHECK(run([&](auto done) { ledger.propose(document(Phase::Planned, "A", "C"), done); }) != "");
  CHECK(nlohmann::json::parse(read(ledger.path()))["move"]["to"] == "B");

  SECTION("a move under way resumes with an epoch no earlier switch had") {
    LocalLedger again(config_path, "moves.json");
    auto kept = again.load();
    REQUIRE(kept.move);
    CHECK(kept.move->document.phase == Phase::Moving);
    CHECK(kept.move->document.epoch == 2);
    CHECK(kept.move->document.released == 0);
  }

  SECTION("finished: the destination is in force, the origin names salted counters") {
    auto move = *last;
    ledger.acknowledge(move.id, move.document.epoch);
    CHECK(ledger.all_acknowledged(move.id, move.document.epoch));
    CHECK_FALSE(ledger.all_acknowledged(move.id, move.document.epoch + 1));
    REQUIRE(run([&](auto done) { ledger.finish(move, done); }) == "");
    CHECK_FALSE(last);
    CHECK(ledger.in_force_text() == "B");
    LocalLedger again(config_path, "moves.json");
    auto kept = again.load();
    CHECK(kept.found);
    CHECK(kept.in_force_text == "B");
    CHECK_FALSE(kept.move);
    CHECK(again.naming_text() == "A");
  }

  SECTION("aborted and finished: the origin is in force again") {
    REQUIRE(run([&](auto done) { ledger.abort(done); }) == "");
    REQUIRE(last);
    CHECK(last->document.phase == Phase::Aborting);
    CHECK(last->document.epoch == 2);
    auto stale = *last;
    stale.document.epoch = 1;
    CHECK(run([&](auto done) { ledger.finish(stale, done); }) != "");
    REQUIRE(run([&](auto done) { ledger.finish(*last, done); }) == "");
    LocalLedger again(config_path, "moves.json");
    auto kept = again.load();
    CHECK(kept.in_force_text == "A");
    CHECK_FALSE(kept.move);
    CHECK(again.naming_text().empty());
  }
}

TEST_CASE("LocalLedger: aborting a planned move removes it") {
  test::TempDir dir;
  LocalLedger ledger(dir.path() / "s.yaml", "");
  ledger.load();
  ledger.set_in_force_text("A");
  REQUIRE(run([&](auto done) { ledger.propose(document(Phase::Planned, "A", "B"), done); }) == "");
  REQUIRE(run([&](auto done) { ledger.abort(done); }) == "");
  CHECK_FALSE(ledger.has_move());
  CHECK(run([&](auto done) { ledger.approve(done); }) != "");
  LocalLedger again(dir.path() / "s.yaml", "");
  auto kept = again.load();
  CHECK(kept.found);
  CHECK(kept.in_force_text == "A");
  CHECK_FALSE(kept.move);
}

TEST_CASE("LocalLedger reads format 1 (a move under way alone)") {
  test::TempDir dir;
  dir.write("s.yaml.reshard.json", R"({"state": "finishing", "from": "A", "to": "B"})");
  LocalLedger ledger(dir.path() / "s.yaml", "");
  auto kept = ledger.load();
  CHECK(kept.in_force_text == "A");
  REQUIRE(kept.move);
  // "finishing" walks again as a move.
  CHECK(kept.move->document.phase == Phase::Moving);
  CHECK(kept.move->document.to_text == "B");
  CHECK(kept.move->id == 1);
}

TEST_CASE("LocalLedger: a bad state file is a StateFileError naming the file") {
  test::TempDir dir;
  LocalLedger ledger(dir.path() / "s.yaml", "");
  std::string name = ledger.path().string();
  SECTION("not JSON") {
    dir.write("s.yaml.reshard.json", "{not json");
  }
  SECTION("not an object") {
    dir.write("s.yaml.reshard.json", "[1, 2]");
  }
  SECTION("format 2 without in_force") {
    dir.write("s.yaml.reshard.json", R"({"format": 2, "move": null})");
  }
  SECTION("an unknown state") {
    dir.write(
        "s.yaml.reshard.json",
        R"({"format": 2, "in_force": "A", "move": {"state": "frobbing", "from": "A", "to": "B"}})");
  }
  SECTION("a folder") {
    std::filesystem::create_directory(ledger.path());
  }
  try {
    ledger.load();
    FAIL("load() accepted a bad state file");
  } catch (const StateFileError& e) {
    CHECK(std::string(e.what()).find(name) != std::string::npos);
  }
}

TEST_CASE("LocalLedger: a write that fails is refused with the file's name") {
  test::TempDir dir;
  LocalLedger ledger(dir.path() / "s.yaml", "missing/folder/state.json");
  ledger.load();
  bool changed = false;
  ledger.on_change([&](const auto&) { changed = true; });
  auto error = run([&](auto done) { ledger.propose(document(Phase::Planned, "A", "B"), done); });
  CHECK(error.find(ledger.path().string()) != std::string::npos);
  CHECK_FALSE(ledger.has_move());
  CHECK_FALSE(changed);
}
