#include "router/merge/scan_cursor.h"

#include "protocol/arguments.h"

namespace santral::router {
namespace {

// A shard cursor times kScanShardSlots must fit in 64 bits.
constexpr std::uint64_t kShardCursorLimit = std::uint64_t{1} << 54;

}  // namespace

std::optional<ScanPosition> decode_scan_cursor(std::string_view text, std::uint32_t shard_count) {
  auto cursor = protocol::parse_integer<std::uint64_t>(text);
  if (!cursor) return std::nullopt;
  const auto shard = static_cast<std::uint32_t>(*cursor % kScanShardSlots);
  if (shard >= shard_count) return std::nullopt;
  return ScanPosition{shard, *cursor / kScanShardSlots};
}

std::optional<std::uint64_t> next_scan_cursor(ScanPosition answered, std::uint64_t shard_cursor,
                                              std::uint32_t shard_count) {
  if (answered.shard >= kScanShardSlots) return std::nullopt;
  if (shard_cursor != 0) {
    if (shard_cursor >= kShardCursorLimit) return std::nullopt;
    return shard_cursor * kScanShardSlots + answered.shard;
  }
  const std::uint64_t next_shard = std::uint64_t{answered.shard} + 1;
  if (next_shard >= shard_count) return 0;
  // The next shard from its start: shard cursor 0. Past slot 1023 it would read as shard 0.
  if (next_shard >= kScanShardSlots) return std::nullopt;
  return next_shard;
}

}  // namespace santral::router
