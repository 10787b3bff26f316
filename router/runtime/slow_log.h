#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "router/backend/reply_sink.h"

namespace santral::protocol {
class RespWriter;
}  // namespace santral::protocol

namespace santral::router {

// Where a request's time went, kept with its reply slot while `slowlog:` is on, so that the
// request can be logged if it turns out slow: its arguments, the time it waited in Santral
// before it could be sent (behind a pull of its keys, or behind earlier replies), and each
// shard's part (router/backend/reply_sink.h: ShardTiming).
//
//   read ──queued──► sent ──held (failover)──► on the shard's connection ──waited──► reply
//   └──────────────────────────── end to end: SLOWLOG's duration ─────────────────────┘
// A request's arguments, truncated as Redis does (slow_args below), each as one length byte
// and its bytes: a short command (GET or SET of a key of up to ~30 bytes) stays within the
// trace, so that a request costs no allocation while `slowlog:` is on.
using SlowArgs = boost::container::small_vector<char, 48>;

struct SlowTrace {
  SlowArgs args;
  std::chrono::steady_clock::duration queued{};
  bool queued_behind_pull = false;  // else behind earlier replies (WAIT, a pinned MULTI, ...)
  boost::container::small_vector<ShardTiming, 1> shards;
};

// Redis's SLOWLOG truncation: at most 32 arguments (the 32nd says how many more there were),
// each at most 128 bytes ("... (N more bytes)"); passwords are "(redacted)", as in Redis 7.0
// (protocol/redacted_arguments.h).
void slow_args(std::span<const std::string_view> args, SlowArgs& out);

// One slow request, as SLOWLOG GET shows it.
struct SlowEntry {
  std::uint64_t id = 0;          // unique in this process, increasing
  std::int64_t unix_time = 0;    // when its reply was ready
  std::int64_t duration_us = 0;  // end to end: read to reply ready
  std::string args;              // SlowTrace::args, copied once the request is found slow
  std::string measure;           // Santral's measure: "santral: shard1 waited 503021us, ..."
  std::string client_addr;
  std::string client_name;
};

// Santral's measure in words: each shard waited for (named, with how long it took, and how
// long the request was held for a failover there), then the time queued in Santral.
std::string slow_measure(const SlowTrace& trace,
                         const std::function<std::string(std::size_t)>& shard_name);

// SLOWLOG GET's entry: Redis's six fields (id, time, microseconds, arguments, client address,
// client name); Santral's measure is the last argument, where Redis says how many arguments
// it left out, so that every client that reads Redis's entries reads these.
void write_slow_entry(protocol::RespWriter& out, const SlowEntry& entry);

// One worker's slow requests, newest first, at most slowlog.max_len. Touched on a worker's
// thread only: when a request is slow, and when SLOWLOG asks (router/commands/slowlog_commands.h).
class SlowLog {
 public:
  void add(SlowEntry entry, std::size_t max_len);
  // The newest `count` (all when count is past the size).
  std::vector<SlowEntry> newest(std::size_t count) const;
  std::size_t size() const { return entries_.size(); }
  void reset() { entries_.clear(); }

 private:
  std::deque<SlowEntry> entries_;
};

}  // namespace santral::router
