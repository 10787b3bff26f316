#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "router/hotkeys/salting/auto_salt.h"

using namespace santral::router;
using Kind = AutoSaltDecision::Kind;
using std::chrono::milliseconds;

namespace {

HotKeyRate rate(const std::string& key, double writes, std::uint32_t salts = 0,
                bool non_counter = false) {
  HotKeyRate out;
  out.key = key;
  out.ops = out.writes = writes;
  out.salts = salts;
  out.non_counter = non_counter;
  return out;
}

santral::config::AutoSaltSettings settings() {
  santral::config::AutoSaltSettings s;
  s.enabled = true;
  s.writes_per_sec = 1000;
  s.for_s = 2;
  s.cold_writes_per_sec = 100;
  s.cold_for_s = 3;
  return s;
}

}  // namespace

TEST_CASE("a counter hot for for_s is salted; a mixed, cooling or salted one is not") {
  AutoSalting auto_salting;
  auto t0 = AutoSalting::Clock::now();
  std::vector<HotKeyRate> rates = {rate("likes", 5000), rate("mixed", 5000, 0, true),
                                   rate("warm", 900), rate("salted", 5000, 4)};
  CHECK(auto_salting.check(settings(), rates, {}, t0).empty());
  CHECK(auto_salting.check(settings(), rates, {}, t0 + milliseconds(1999)).empty());
  auto decisions = auto_salting.check(settings(), rates, {}, t0 + milliseconds(2000));
  REQUIRE(decisions.size() == 1);
  CHECK(decisions[0].kind == Kind::Salt);
  CHECK(decisions[0].key == "likes");
  CHECK(decisions[0].writes_per_sec == 5000);

  // A dip below the threshold starts the time again.
  AutoSalting dipping;
  CHECK(dipping.check(settings(), {rate("likes", 5000)}, {}, t0).empty());
  CHECK(dipping.check(settings(), {rate("likes", 500)}, {}, t0 + milliseconds(1000)).empty());
  CHECK(dipping.check(settings(), {rate("likes", 5000)}, {}, t0 + milliseconds(2500)).empty());
  CHECK(dipping.check(settings(), {rate("likes", 5000)}, {}, t0 + milliseconds(4500)).size() == 1);
}

TEST_CASE("an automatically salted key cold for cold_for_s is unsalted, even out of the sketch") {
  AutoSalting auto_salting;
  auto t0 = AutoSalting::Clock::now();
  std::vector<std::string> salted = {"likes", "busy"};
  std::vector<HotKeyRate> rates = {rate("likes", 50, 4), rate("busy", 400, 4)};
  CHECK(auto_salting.check(settings(), rates, salted, t0).empty());
  // "likes" drops out of every sketch: a rate of 0.
  auto decisions =
      auto_salting.check(settings(), {rate("busy", 400, 4)}, salted, t0 + milliseconds(3000));
  REQUIRE(decisions.size() == 1);
  CHECK(decisions[0].kind == Kind::Unsalt);
  CHECK(decisions[0].key == "likes");
  CHECK(decisions[0].writes_per_sec == 0);
}
