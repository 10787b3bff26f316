#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "router/hotkeys/detection/hot_key_detector.h"
#include "router/hotkeys/detection/hot_key_sketch.h"

using namespace santral::router;

namespace {

const HotKeySketch::Entry* entry_of(const HotKeySketch& sketch, const std::string& key) {
  for (const auto& entry : sketch.entries())
    if (entry.key == key) return &entry;
  return nullptr;
}

}  // namespace

TEST_CASE("Space-Saving keeps every key seen more than total/capacity times") {
  HotKeySketch sketch(8);
  std::uint64_t total = 0;
  // Two hot keys among a stream of 5,000 distinct cold ones.
  for (int i = 0; i < 5000; ++i) {
    sketch.add("cold:" + std::to_string(i), 1, false);
    ++total;
    if (i % 4 == 0) {
      sketch.add("hot:a", 1, true);
      ++total;
    }
    if (i % 5 == 0) {
      sketch.add("hot:b", 1, false);
      ++total;
    }
  }
  CHECK(sketch.entries().size() == 8);
  const auto* a = entry_of(sketch, "hot:a");
  const auto* b = entry_of(sketch, "hot:b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  // The counts bound the truth from both sides.
  CHECK(a->count >= 1250);
  CHECK(a->count - a->overcount <= 1250);
  CHECK(b->count >= 1000);
  CHECK(b->count - b->overcount <= 1000);
  CHECK(a->writes > 0);
  CHECK(a->reads == 0);
  CHECK(b->writes == 0);
  for (const auto& entry : sketch.entries()) CHECK(entry.count <= total);
}

TEST_CASE("the detector samples one request in sample_every and reports rates") {
  santral::config::HotKeySettings settings;
  settings.sample_every = 4;
  settings.capacity = 4;
  auto start = HotKeyDetector::Clock::now();
  HotKeyDetector detector(settings, start);
  int due = 0;
  for (int i = 0; i < 400; ++i) {
    if (!detector.due()) continue;
    ++due;
    detector.record(i % 2 == 0 ? "even" : "odd", i % 2 == 0);
  }
  CHECK(due == 100);
  auto rates = detector.rates(start + std::chrono::seconds(2));
  REQUIRE(rates.size() == 1);  // every sampled request was the 4th, 8th, ...: all odd
  CHECK(rates[0].key == "odd");
  CHECK(rates[0].ops == Approx(200.0));  // 100 samples x 4 over 2 s
  CHECK(rates[0].reads == Approx(200.0));
  CHECK(rates[0].writes == Approx(0.0));

  settings.enabled = false;
  detector.configure(settings, start);
  for (int i = 0; i < 100; ++i) CHECK_FALSE(detector.due());
}

TEST_CASE("workers' rates add up key by key, hottest first") {
  std::vector<HotKeyRate> total = {{"a", 10, 10, 0, 0, "s0"}, {"b", 5, 0, 5, 3, "s1"}};
  merge_rates(total, {{"b", 20, 0, 20, 3, "s1"}, {"c", 1, 1, 0, 0, "s2"}});
  REQUIRE(total.size() == 3);
  CHECK(total[0].key == "b");
  CHECK(total[0].ops == 25);
  CHECK(total[0].salts == 3);
  CHECK(total[1].key == "a");
  CHECK(total[2].key == "c");
}

TEST_CASE("a tracked key remembers a non-counter access until it is replaced") {
  HotKeySketch sketch(1);
  sketch.add("likes", 1, true, true);
  sketch.add("likes", 1, false, true);
  CHECK_FALSE(sketch.entries()[0].non_counter);
  sketch.add("likes", 1, true, false);  // a SET, say
  CHECK(sketch.entries()[0].non_counter);
  sketch.add("other", 1, true, true);  // takes the only place
  CHECK(sketch.entries()[0].key == "other");
  CHECK_FALSE(sketch.entries()[0].non_counter);
}
