#include "router/merge/scan_cursor.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using santral::router::decode_scan_cursor;
using santral::router::next_scan_cursor;
using santral::router::ScanPosition;

namespace {

void check_position(std::string_view text, std::uint32_t shards, std::uint32_t shard,
                    std::uint64_t shard_cursor) {
  INFO("cursor " << text << " of " << shards << " shards");
  const auto position = decode_scan_cursor(text, shards);
  REQUIRE(position);
  CHECK(position->shard == shard);
  CHECK(position->shard_cursor == shard_cursor);
}

}  // namespace

TEST_CASE("a cursor names a shard and a place in it") {
  check_position("0", 1, 0, 0);
  check_position("0", 3, 0, 0);
  check_position("1", 3, 1, 0);
  check_position("2", 3, 2, 0);
  check_position("2049", 3, 1, 2);
  check_position("17408", 3, 0, 17);
  check_position("007", 8, 7, 0);
  check_position("18446744073709551615", 1024, 1023, (std::uint64_t{1} << 54) - 1);
}

TEST_CASE("cursors Santral could not have returned are refused") {
  for (const char* text : {"", "-1", "+1", " 1", "1 ", "abc", "1a", "0x10", "1.0",
                           "18446744073709551616", "99999999999999999999999"}) {
    INFO("cursor '" << text << "'");
    CHECK_FALSE(decode_scan_cursor(text, 3));
  }
  CHECK_FALSE(decode_scan_cursor("3", 3));  // shard 3 of shards 0..2
  CHECK_FALSE(decode_scan_cursor("1", 1));
  CHECK_FALSE(decode_scan_cursor("2047", 3));  // shard 1023
}

TEST_CASE("the next cursor stays on the shard until it is done, then moves on") {
  CHECK(next_scan_cursor({0, 0}, 17, 3) == 17 * 1024);
  CHECK(next_scan_cursor({2, 5}, 5, 3) == 5 * 1024 + 2);
  CHECK(next_scan_cursor({0, 9}, 0, 3) == 1);
  CHECK(next_scan_cursor({1, 9}, 0, 3) == 2);
  CHECK(next_scan_cursor({2, 9}, 0, 3) == 0);
  CHECK(next_scan_cursor({0, 0}, 0, 1) == 0);
  CHECK(next_scan_cursor({0, 0}, 1, 1) == 1024);
}

TEST_CASE("a shard cursor too large to encode is reported") {
  const std::uint64_t limit = std::uint64_t{1} << 54;
  CHECK_FALSE(next_scan_cursor({1, 0}, limit, 3));
  CHECK_FALSE(next_scan_cursor({1, 0}, UINT64_MAX, 3));
  CHECK(next_scan_cursor({1, 0}, limit - 1, 3) == (limit - 1) * 1024 + 1);
  CHECK(next_scan_cursor({1023, 0}, limit - 1, 1024) == UINT64_MAX);
  CHECK(next_scan_cursor({1023, 0}, 0, 1024) == 0);
}

TEST_CASE("a cursor returned decodes to where the scan continues") {
  for (std::uint32_t shards : {1u, 2u, 7u, 1024u}) {
    for (std::uint32_t shard : {0u, shards / 2, shards - 1}) {
      for (std::uint64_t answered : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{123456},
                                     (std::uint64_t{1} << 54) - 1}) {
        INFO(shards << " shards, shard " << shard << " answered " << answered);
        const auto cursor = next_scan_cursor({shard, 0}, answered, shards);
        REQUIRE(cursor);
        const auto next = decode_scan_cursor(std::to_string(*cursor), shards);
        REQUIRE(next);
        if (answered != 0) {
          CHECK(next->shard == shard);
          CHECK(next->shard_cursor == answered);
        } else if (shard + 1 < shards) {
          CHECK(next->shard == shard + 1);
          CHECK(next->shard_cursor == 0);
        } else {
          CHECK(*cursor == 0);
        }
      }
    }
  }
}

TEST_CASE("a whole scan visits every shard in turn and ends with 0") {
  // Each shard's own cursors, as it would return them: 0 ends that shard.
  const std::vector<std::vector<std::uint64_t>> shard_cursors = {{5, 9, 0}, {0}, {3, 0}};
  const auto shards = static_cast<std::uint32_t>(shard_cursors.size());
  std::vector<std::size_t> calls(shards, 0);
  std::vector<std::pair<std::uint32_t, std::uint64_t>> visited;
  std::string cursor = "0";
  for (int step = 0; step < 20; ++step) {
    const auto position = decode_scan_cursor(cursor, shards);
    REQUIRE(position);
    visited.emplace_back(position->shard, position->shard_cursor);
    const std::uint64_t answered = shard_cursors[position->shard][calls[position->shard]++];
    const auto next = next_scan_cursor(*position, answered, shards);
    REQUIRE(next);
    cursor = std::to_string(*next);
    if (cursor == "0") break;
  }
  CHECK(cursor == "0");
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> expected = {{0, 0}, {0, 5}, {0, 9},
                                                                         {1, 0}, {2, 0}, {2, 3}};
  CHECK(visited == expected);
}
