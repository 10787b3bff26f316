#include <catch2/catch.hpp>

#include <string>

#include "router/merge/gathered/hyperloglog_count.h"

using namespace santral::router;

namespace {

std::string header(char encoding) {
  return std::string("HYLL") + encoding + std::string(11, '\0');
}

// A sparse HLL: XZERO opcodes covering `registers` empty registers.
std::string sparse_zeros(std::size_t registers) {
  std::string value = header('\x01');
  while (registers > 0) {
    std::size_t run = std::min<std::size_t>(registers, 16384);
    value.push_back(static_cast<char>(0x40 | ((run - 1) >> 8)));
    value.push_back(static_cast<char>((run - 1) & 0xff));
    registers -= run;
  }
  return value;
}

}  // namespace

TEST_CASE("an empty HLL counts 0, in either encoding") {
  HllRegisters max{};
  CHECK(hll_count(max) == 0);
  std::string dense = header('\x00') + std::string(12288, '\0');
  REQUIRE(is_hyperloglog(dense));
  CHECK(hll_merge(max, dense));
  std::string sparse = sparse_zeros(16384);
  REQUIRE(is_hyperloglog(sparse));
  CHECK(hll_merge(max, sparse));
  CHECK(hll_count(max) == 0);
}

TEST_CASE("sparse opcodes set registers; merging takes the maximum") {
  // VAL opcode: 1vvvvvxx: value v+1 over xx+1 registers. Here 3 registers of value 2, then
  // the rest empty.
  std::string value = header('\x01');
  value.push_back(static_cast<char>(0x80 | (1 << 2) | 2));
  std::size_t rest = 16384 - 3;
  value.push_back(static_cast<char>(0x40 | ((rest - 1) >> 8)));
  value.push_back(static_cast<char>((rest - 1) & 0xff));
  HllRegisters max{};
  max[1] = 5;
  REQUIRE(hll_merge(max, value));
  CHECK(max[0] == 2);
  CHECK(max[1] == 5);
  CHECK(max[2] == 2);
  CHECK(max[3] == 0);
  CHECK(hll_count(max) == 3);
}

TEST_CASE("what Redis calls not an HLL, or corrupted") {
  CHECK_FALSE(is_hyperloglog("HYLL"));
  CHECK_FALSE(is_hyperloglog("HYLX" + std::string(12, '\0')));
  CHECK_FALSE(is_hyperloglog(header('\x02')));                           // raw: internal only
  CHECK_FALSE(is_hyperloglog(header('\x00') + std::string(100, '\0')));  // dense, wrong size
  HllRegisters max{};
  CHECK_FALSE(hll_merge(max, sparse_zeros(100)));  // does not cover every register
  std::string overflow = sparse_zeros(16383);
  overflow.push_back(static_cast<char>(0x80 | 3));  // 4 registers past the end
  CHECK_FALSE(hll_merge(max, overflow));
}
