#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace santral::router {

// The errors a merge composes itself (a shard's own error is forwarded unchanged). Each
// returns the message without the leading '-' and the CRLF; write it with RespWriter::error.

// A shard error's text goes inside a one-line error: line breaks (possible in a RESP3 blob
// error) become spaces.
inline std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line)
    if (c == '\r' || c == '\n') c = ' ';
  return line;
}

inline std::string unexpected_reply_error(std::string_view shard, std::string_view command) {
  return fmt::format("ERR santral: shard '{}' sent an unexpected reply to {}", shard, command);
}

inline std::string no_reply_error(std::string_view shard, std::string_view command) {
  return fmt::format("ERR santral: shard '{}' did not answer {}", shard, command);
}

inline std::string no_shard_error(std::string_view command) {
  return fmt::format("ERR santral: {} was sent to no shard", command);
}

inline std::string no_merge_rule_error(std::string_view command) {
  return fmt::format("ERR santral: {} has no rule to merge the replies of several shards", command);
}

// The plan does not fit the request it describes (a bug in the planner, not in a shard).
inline std::string inconsistent_plan_error(std::string_view command) {
  return fmt::format("ERR santral: internal error while merging the replies to {}", command);
}

// `shards` are the failing shards in fragment order; `first_error` is the first one's error
// text (without '-').
inline std::string failed_on_shards_error(std::string_view command,
                                          std::span<const std::string_view> shards,
                                          std::string_view first_error) {
  std::string message = fmt::format("ERR santral: {} failed on shard(s) ", command);
  for (std::size_t i = 0; i < shards.size(); ++i)
    fmt::format_to(std::back_inserter(message), "{}'{}'", i == 0 ? "" : ", ", shards[i]);
  fmt::format_to(std::back_inserter(message), ": {}", one_line(first_error));
  return message;
}

// `answers` are "shard 'a': <short text>" entries, already shortened.
inline std::string answered_differently_error(std::string_view command,
                                              std::span<const std::string> answers) {
  return fmt::format("ERR santral: shards answered {} differently ({})", command,
                     fmt::join(answers, ", "));
}

inline std::string sum_overflow_error(std::string_view command) {
  return fmt::format(
      "ERR santral: the shards' replies to {} add up to more than a 64-bit "
      "integer holds",
      command);
}

inline std::string scan_cursor_too_large_error(std::string_view shard, std::uint64_t cursor) {
  return fmt::format(
      "ERR santral: shard '{}' returned the SCAN cursor {}, too large to combine with a shard "
      "number (Santral needs shard cursors below 2^54); scan that shard directly",
      shard, cursor);
}

}  // namespace santral::router
