#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "router/hotkeys/detection/hot_key_report.h"

using namespace santral::router;

namespace {

HotKeyRate rate(std::string key, double ops, std::uint32_t salts = 0) {
  HotKeyRate r;
  r.key = std::move(key);
  r.ops = ops;
  r.salts = salts;
  return r;
}

std::vector<std::string> keys_of(const std::vector<HotKeyRate>& rates) {
  std::vector<std::string> keys;
  for (const auto& r : rates) keys.push_back(r.key);
  return keys;
}

}  // namespace

TEST_CASE("an operator's list: the hottest keys, then every salted counter besides") {
  std::vector<HotKeyRate> rates = {rate("a", 900),    rate("b", 800, 4), rate("c", 700),
                                   rate("d", 600, 2), rate("e", 500),    rate("idle", 0, 3)};
  CHECK(keys_of(hottest_and_salted(rates, 2)) == std::vector<std::string>{"a", "b", "d", "idle"});
  CHECK(keys_of(hottest_and_salted(rates, 0)) == std::vector<std::string>{"b", "d", "idle"});
  CHECK(keys_of(hottest_and_salted(rates, 10)) ==
        std::vector<std::string>{"a", "b", "c", "d", "e", "idle"});
  CHECK(hottest_and_salted({}, 5).empty());
}
