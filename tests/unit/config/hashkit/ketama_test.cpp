#include "config/hashkit/ketama.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/hashkit/hash_functions.h"
#include "config/hashkit/modula.h"

using santral::hashkit::KetamaRing;
using santral::hashkit::ModulaTable;
using santral::hashkit::RingNode;

namespace {

std::vector<std::size_t> points_per_node(const KetamaRing& ring, std::size_t nodes) {
  std::vector<std::size_t> counts(nodes);
  for (const auto& p : ring.points()) ++counts.at(p.node);
  return counts;
}

// The point counts below were read from nutcracker 0.5.0's own ketama_update().
const std::vector<RingNode> kFour = {{"alpha", 1}, {"beta", 2}, {"gamma", 1}, {"delta", 3}};

}  // namespace

TEST_CASE("ketama gives each server points in proportion to its weight, as twemproxy does") {
  SECTION("unequal weights") {
    KetamaRing ring(kFour);
    CHECK(points_per_node(ring, 4) == std::vector<std::size_t>{88, 180, 88, 272});
    CHECK(ring.points().size() == 628);
  }
  SECTION("equal weights: 160 points each") {
    std::vector<RingNode> nodes = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1},
                                   {"e", 1}, {"f", 1}, {"g", 1}};
    KetamaRing ring(nodes);
    CHECK(points_per_node(ring, 7) == std::vector<std::size_t>(7, 160));
  }
  SECTION("twemproxy's single-precision arithmetic, not exact arithmetic, sets the count") {
    // 1/25 * 160/4 * 5 is exactly 8, but 7.9999995 in float: 28 points, not 32.
    std::vector<RingNode> nodes = {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"e", 15}};
    KetamaRing ring(nodes);
    CHECK(points_per_node(ring, 5) == std::vector<std::size_t>{28, 60, 92, 124, 480});
  }
  SECTION("a server whose share rounds below one digest gets no points at all") {
    std::vector<RingNode> nodes = {{"a", 1}, {"b", 1000}};
    KetamaRing ring(nodes);
    CHECK(points_per_node(ring, 2) == std::vector<std::size_t>{0, 316});
    for (std::uint32_t h : {0u, 1u << 31, 0xffffffffu}) CHECK(ring.locate(h) == 1);
  }
  SECTION("a single server") {
    std::vector<RingNode> nodes = {{"s", 1}};
    KetamaRing ring(nodes);
    CHECK(ring.points().size() == 160);
    CHECK(ring.locate(12345) == 0);
  }
}

TEST_CASE("ketama points are the values nutcracker 0.5.0 computes, sorted") {
  KetamaRing ring(kFour);
  auto points = ring.points();
  REQUIRE(points.size() == 628);
  CHECK(std::is_sorted(points.begin(), points.end(),
                       [](const auto& a, const auto& b) { return a.value < b.value; }));
  // The head and tail of nutcracker's continuum for the same servers.
  CHECK(points[0].value == 0x0031b809);
  CHECK(points[0].node == 3);
  CHECK(points[1].value == 0x00800cf9);
  CHECK(points[1].node == 0);
  CHECK(points[2].value == 0x0217518a);
  CHECK(points[2].node == 3);
  CHECK(points[627].value == 0xffc25fe2);
  CHECK(points[627].node == 2);
}

TEST_CASE("ketama locate() takes the first point at or after the hash, and wraps") {
  KetamaRing ring(kFour);
  auto points = ring.points();
  CHECK(ring.locate(0) == points[0].node);
  CHECK(ring.locate(points[0].value) == points[0].node);
  CHECK(ring.locate(points[0].value + 1) == points[1].node);
  CHECK(ring.locate(points[10].value) == points[10].node);
  CHECK(ring.locate(points[10].value - 1) == points[10].node);
  CHECK(ring.locate(points[627].value) == points[627].node);
  // Past the last point the ring wraps to the first.
  CHECK(ring.locate(points[627].value + 1) == points[0].node);
  CHECK(ring.locate(0xffffffff) == points[0].node);
}

TEST_CASE("ketama placement depends on names and weights, not on config order") {
  std::vector<RingNode> shuffled = {kFour[3], kFour[1], kFour[0], kFour[2]};
  KetamaRing a(kFour);
  KetamaRing b(shuffled);
  for (std::uint64_t h = 0; h <= 0xffffffffu; h += 0x100001u) {
    auto hash = static_cast<std::uint32_t>(h);
    CHECK(kFour[a.locate(hash)].name == shuffled[b.locate(hash)].name);
  }
}

TEST_CASE("ketama hashes at most 272 bytes of a point key, as twemproxy's buffer does") {
  // Every "<name>-<n>" of a 300-byte name is cut to the same 272 bytes: one digest, 4 values.
  const std::string long_name(300, 'x');
  std::vector<RingNode> nodes = {{long_name, 1}, {"short", 1}};
  KetamaRing ring(nodes);
  std::set<std::uint32_t> values;
  for (const auto& p : ring.points()) {
    if (p.node == 0) values.insert(p.value);
  }
  CHECK(points_per_node(ring, 2) == std::vector<std::size_t>{160, 160});
  CHECK(values.size() == 4);
}

TEST_CASE("ketama spreads keys roughly in proportion to weight") {
  KetamaRing ring(kFour);
  std::map<std::size_t, int> hits;
  const int keys = 70000;
  for (int i = 0; i < keys; ++i) {
    ++hits[ring.locate(santral::hashkit::md5("key:" + std::to_string(i)))];
  }
  const double total_weight = 7;
  for (std::size_t node = 0; node < kFour.size(); ++node) {
    double expected = keys * kFour[node].weight / total_weight;
    INFO("node " << kFour[node].name << " got " << hits[node] << ", expected ~" << expected);
    CHECK(hits[node] > 0.75 * expected);
    CHECK(hits[node] < 1.25 * expected);
  }
}

TEST_CASE("modula gives a server one slot per unit of weight, in twemproxy's server order") {
  // twemproxy sorts servers by name, shorter names first, then bytewise:
  // "mu" < "zeta" < "alpha" < "beta-longer" (the order nutcracker 0.5.0 lays them out in).
  std::vector<RingNode> nodes = {{"zeta", 1}, {"alpha", 2}, {"mu", 1}, {"beta-longer", 3}};
  ModulaTable table(nodes);
  REQUIRE(table.slot_count() == 7);
  std::vector<std::size_t> slots;
  for (std::uint32_t h = 0; h < 7; ++h) slots.push_back(table.locate(h));
  CHECK(slots == std::vector<std::size_t>{2, 0, 1, 1, 3, 3, 3});
  // hash % total weight
  CHECK(table.locate(7) == 2);
  CHECK(table.locate(11) == 3);
  CHECK(table.locate(0xffffffff) == table.locate(0xffffffffu % 7));
}

TEST_CASE("modula orders unnamed servers by their host:port text") {
  // Same length, so bytewise; a shorter one sorts first whatever its port number.
  std::vector<RingNode> nodes = {
      {"127.0.0.1:6380", 1}, {"127.0.0.1:10000", 1}, {"127.0.0.1:6379", 2}};
  ModulaTable table(nodes);
  REQUIRE(table.slot_count() == 4);
  CHECK(table.locate(0) == 2);
  CHECK(table.locate(1) == 2);
  CHECK(table.locate(2) == 0);
  CHECK(table.locate(3) == 1);
}
