#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "protocol/errors.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;
using protocol::one_line;

// The errors a merge composes itself (a shard's own error is forwarded unchanged), with their
// texts in protocol/errors.cpp. Each returns the message without the leading '-' and the
// CRLF; write it with RespWriter::error.

inline std::string unexpected_reply_error(std::string_view shard, std::string_view command) {
  return error_message(ClientError::MergeUnexpectedReply, shard, command);
}

inline std::string no_reply_error(std::string_view shard, std::string_view command) {
  return error_message(ClientError::MergeNoReply, shard, command);
}

inline std::string no_shard_error(std::string_view command) {
  return error_message(ClientError::MergeNoShard, command);
}

inline std::string no_merge_rule_error(std::string_view command) {
  return error_message(ClientError::MergeNoRule, command);
}

// The plan does not fit the request it describes (a bug in the planner, not in a shard).
inline std::string inconsistent_plan_error(std::string_view command) {
  return error_message(ClientError::MergeInconsistentPlan, command);
}

// `shards` are the failing shards in fragment order; `first_error` is the first one's error
// text (without '-').
inline std::string failed_on_shards_error(std::string_view command,
                                          std::span<const std::string_view> shards,
                                          std::string_view first_error) {
  std::string names;
  for (std::size_t i = 0; i < shards.size(); ++i)
    fmt::format_to(std::back_inserter(names), "{}'{}'", i == 0 ? "" : ", ", shards[i]);
  return error_message(ClientError::MergeFailedOnShards, command, names, one_line(first_error));
}

// A shard busy with a script answered BUSY: its text first, as Redis sends it, then which
// shards were busy and whether the others ran the command.
inline std::string busy_on_shards_error(std::string_view busy, std::string_view command,
                                        std::span<const std::string_view> shards, bool others_ran) {
  std::string names;
  for (std::size_t i = 0; i < shards.size(); ++i)
    fmt::format_to(std::back_inserter(names), "{}'{}'", i == 0 ? "" : ", ", shards[i]);
  return error_message(
      others_ran ? ClientError::MergeBusyOnSomeShards : ClientError::MergeBusyOnShards,
      one_line(busy), command, names);
}

// `answers` are "shard 'a': <short text>" entries, already shortened.
inline std::string answered_differently_error(std::string_view command,
                                              std::span<const std::string> answers) {
  return error_message(ClientError::MergeAnsweredDifferently, command, fmt::join(answers, ", "));
}

inline std::string sum_overflow_error(std::string_view command) {
  return error_message(ClientError::MergeSumOverflow, command);
}

inline std::string scan_cursor_too_large_error(std::string_view shard, std::uint64_t cursor) {
  return error_message(ClientError::ScanCursorTooLarge, shard, cursor);
}

}  // namespace santral::router
