#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace santral::router {

// SCAN through Santral walks the shards in turn with one cursor that says which shard and
// where in it: cursor = shard_cursor * 1024 + shard (so a 0 cursor is "shard 0, start" and,
// when returned, "done"). Up to 1024 shards; Redis's own cursors stay far below 2^54.
inline constexpr std::uint64_t kScanShardSlots = 1024;

struct ScanPosition {
  std::uint32_t shard = 0;
  std::uint64_t shard_cursor = 0;
};

// Parses a client's cursor; nullopt when it is not a cursor Santral could have returned for
// `shard_count` shards.
std::optional<ScanPosition> decode_scan_cursor(std::string_view text, std::uint32_t shard_count);
// The cursor to return after a shard answered with `shard_cursor` (0 when that shard is done,
// which moves on to the next shard, or ends the scan after the last one). nullopt if the
// shard's cursor is too large to encode.
std::optional<std::uint64_t> next_scan_cursor(ScanPosition answered, std::uint64_t shard_cursor,
                                              std::uint32_t shard_count);

}  // namespace santral::router
