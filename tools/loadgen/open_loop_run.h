#pragma once

#include <cstdint>
#include <string>

#include "tools/loadgen/latency_histogram.h"
#include "tools/loadgen/request_encoder.h"

namespace santral::loadgen {

struct RunOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  double rate = 0;       // requests a second over all connections
  double duration = 10;  // seconds measured
  double warmup = 1;     // seconds sent before, not measured
  int connections = 50;
  // When set, each connection logs in (AUTH user password) before the run; a refusal stops it.
  std::string user, password;
  Command command = Command::Get;
  std::uint64_t keys = 100000;
  std::uint64_t seed = 1;
  double drain_seconds = 5;  // how long replies may trail the schedule's end
  // Send until standard input ends instead of for `duration`; each line read from it before
  // then names a phase, starting when it is read (written to `log`).
  bool until_eof = false;
  // When set: a file written at the end with the phases and one line per answered request
  // (scripts/lib/phase_latency.py reads it).
  std::string log;
};

// What a run measured. Counts and latencies cover the measured requests only (those scheduled
// after the warm-up); errors and missing replies count every request.
struct RunResult {
  bool started = false;         // every connection was made and the schedule began
  std::uint64_t scheduled = 0;  // measured requests in the schedule: rate * duration
  std::uint64_t sent = 0;       // of those, written to a socket
  std::uint64_t received = 0;   // of those, answered
  std::uint64_t errors = 0;     // error replies, warm-up included
  std::string first_error;      // the first of them
  std::uint64_t missing = 0;    // requests (warm-up included) unanswered drain_seconds after
  double achieved_rate = 0;     // received / (last measured reply - first measured due time)
  LatencyHistogram latencies;   // µs from each request's intended send time to its reply
  double behind_ms = 0;         // the send loop's worst lateness, measured requests only
  std::uint64_t late = 0;       // requests that left more than 1 ms after their due time
  std::string failure;          // why the run stopped early (a connection failed), or empty
};

// The log's format, times in ns from the schedule's start:
//   phase <name> <ns>
//   <intended send ns> <key number> <latency µs> <1 if an error reply, else 0>
// Sends options.rate requests a second, round-robin over the connections, each at its due time
// whether or not earlier ones were answered, on one thread (one io_context).
RunResult run_open_loop(const RunOptions& options);

}  // namespace santral::loadgen
