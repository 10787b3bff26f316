// reshard_state: state names, and what STATUS, GET /reshard and PLAN say of a status.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "router/status/reshard_state.h"

using namespace santral;
using router::ReshardState;
using router::ReshardStatus;
using router::UnitProgress;

namespace {

UnitProgress unit(std::string what, std::string from, std::string to, double share,
                  std::uint64_t keys, std::uint64_t bytes, bool done) {
  UnitProgress u;
  u.unit.placement = "default";
  u.unit.what = std::move(what);
  u.unit.from = std::move(from);
  u.unit.to = std::move(to);
  u.unit.share = share;
  u.keys_estimated = keys;
  u.bytes_estimated = bytes;
  u.done = done;
  return u;
}

ReshardStatus two_units() {
  ReshardStatus status;
  status.state = ReshardState::Moving;
  status.map_version = 12;
  status.units = {unit("slots 0-99", "shard0", "shard3", 0.25, 100, 1000, true),
                  unit("slots 100-199", "shard1", "shard3", 0, 30, 700, false)};
  status.keys_moved = 77;
  status.bytes_moved = 880;
  status.errors = 2;
  status.last_error = "ERR boom";
  status.keys_per_sec = 12.6;
  status.eta_s = 3.26;
  status.elapsed_s = 10;
  status.largest_key_bytes = 512;
  return status;
}

}  // namespace

TEST_CASE("reshard_state_name names every state distinctly") {
  CHECK(router::reshard_state_name(ReshardState::Idle) == "idle");
  CHECK(router::reshard_state_name(ReshardState::Planned) == "planned");
  CHECK(router::reshard_state_name(ReshardState::Moving) == "moving");
  CHECK(router::reshard_state_name(ReshardState::Finishing) == "finishing");
  CHECK(router::reshard_state_name(ReshardState::Aborting) == "aborting");
}

TEST_CASE("ReshardStatus sums its units") {
  auto status = two_units();
  CHECK(status.units_done() == 1);
  CHECK(status.keys_estimated() == 130);
  CHECK(status.bytes_estimated() == 1700);
  ReshardStatus empty;
  CHECK(empty.units_done() == 0);
  CHECK(empty.keys_estimated() == 0);
}

TEST_CASE("to_json carries the status and every unit") {
  auto status = two_units();
  auto j = router::to_json(status);
  CHECK(j["state"] == "moving");
  CHECK(j["map_version"] == 12);
  CHECK(j["units_total"] == 2);
  CHECK(j["units_done"] == 1);
  CHECK(j["keys_estimated"] == 130);
  CHECK(j["bytes_estimated"] == 1700);
  CHECK(j["keys_moved"] == 77);
  CHECK(j["bytes_moved"] == 880);
  CHECK(j["errors"] == 2);
  CHECK(j["last_error"] == "ERR boom");
  CHECK(j["keys_per_sec"].get<double>() == Approx(12.6));
  CHECK(j["largest_key_bytes"] == 512);
  REQUIRE(j["moves"].size() == 2);
  CHECK(j["moves"][0]["unit"] == "slots 0-99");
  CHECK(j["moves"][0]["from"] == "shard0");
  CHECK(j["moves"][0]["to"] == "shard3");
  CHECK(j["moves"][0]["placement"] == "default");
  CHECK(j["moves"][0]["share"].get<double>() == Approx(0.25));
  CHECK(j["moves"][0]["done"] == true);
  CHECK(j["moves"][1]["keys_estimated"] == 30);
  CHECK(j["moves"][1]["done"] == false);
  CHECK(router::to_json(ReshardStatus{})["moves"].is_array());
}

TEST_CASE("status_fields agree with to_json, in order") {
  auto status = two_units();
  auto fields = router::status_fields(status);
  REQUIRE(fields.size() == 16);
  CHECK(fields.front().first == "state");
  CHECK(fields.back().first == "conflicts");
  std::map<std::string, std::string> by_name(fields.begin(), fields.end());
  CHECK(by_name.size() == fields.size());
  auto j = router::to_json(status);
  // Every field STATUS shows, GET /reshard shows too.
  for (const auto& [name, value] : fields) CHECK(j.contains(name));
  CHECK(by_name["state"] == "moving");
  CHECK(by_name["units_total"] == "2");
  CHECK(by_name["units_done"] == "1");
  CHECK(by_name["keys_estimated"] == "130");
  CHECK(by_name["keys_per_sec"] == "13");  // no decimals
  CHECK(by_name["eta_s"] == "3.3");        // one decimal
  CHECK(by_name["elapsed_s"] == "10.0");
  CHECK(by_name["last_error"] == "ERR boom");
}

TEST_CASE("describe_plan says one line per unit") {
  CHECK(router::describe_plan(ReshardStatus{}) == "nothing moves");
  auto status = two_units();
  auto text = router::describe_plan(status);
  CHECK(text.starts_with("2 units move to map version 12 (about 130 keys, 1700 bytes"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(text.find("\n  default: slots 0-99 from shard0 to shard3 (25.00% of it), ~100 keys, "
                  "~1000 bytes, done") != std::string::npos);
  // share 0: unknown, not shown; not done.
  CHECK(text.find("\n  default: slots 100-199 from shard1 to shard3, ~30 keys, ~700 bytes") !=
        std::string::npos);
  CHECK(text.find("~700 bytes, done") == std::string::npos);

  status.units.pop_back();
  CHECK(router::describe_plan(status).starts_with("1 unit move"));
}
