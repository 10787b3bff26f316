#include "tools/loadgen/report.h"

#include <fmt/format.h>

namespace santral::loadgen {
namespace {

constexpr double kBehindMs = 1.0;  // lateness of the send loop worth saying

const char* command_name(Command command) {
  switch (command) {
    case Command::Get:
      return "GET";
    case Command::Set:
      return "SET";
    case Command::Incr:
      return "INCR";
  }
  return "?";
}

}  // namespace

std::string human_line(const RunOptions& options, const RunResult& result) {
  const auto& h = result.latencies;
  const std::string length = options.until_eof ? std::string("until its input ended")
                                               : fmt::format("for {:g} s", options.duration);
  std::string line = fmt::format(
      "{} at {:.0f} req/s over {} connections {} (after {:g} s warm-up): {} sent, {} "
      "received, {} errors, {:.0f} req/s achieved; µs from intended send time: p50 {} p90 {} "
      "p99 {} p99.9 {} max {}",
      command_name(options.command), options.rate, options.connections, length, options.warmup,
      result.sent, result.received, result.errors, result.achieved_rate, h.percentile(50),
      h.percentile(90), h.percentile(99), h.percentile(99.9), h.max());
  if (result.behind_ms > kBehindMs)
    line += fmt::format(
        "; THE GENERATOR FELL BEHIND its schedule by up to {:.1f} ms ({} requests sent more than "
        "1 ms late; their delay is in the latencies)",
        result.behind_ms, result.late);
  else
    line += fmt::format("; the generator kept to its schedule (at most {:.2f} ms late)",
                        result.behind_ms);
  return line;
}

std::string machine_line(const RunOptions& options, const RunResult& result) {
  const auto& h = result.latencies;
  return fmt::format(
      "loadgen: rate={:.0f} sent={} received={} errors={} p50_us={} p90_us={} p99_us={} "
      "p999_us={} max_us={} achieved={:.0f} behind_ms={:.2f} late={} missing={}",
      options.rate, result.sent, result.received, result.errors, h.percentile(50), h.percentile(90),
      h.percentile(99), h.percentile(99.9), h.max(), result.achieved_rate, result.behind_ms,
      result.late, result.missing);
}

std::vector<std::string> failures(const RunOptions& options, const RunResult& result) {
  std::vector<std::string> lines;
  if (!result.failure.empty()) lines.push_back(result.failure);
  if (result.errors > 0)
    lines.push_back(
        fmt::format("{} error replies, the first: {:?}", result.errors, result.first_error));
  if (result.failure.empty() && result.missing > 0)
    lines.push_back(fmt::format("{} requests were unanswered {:g} s after the schedule ended",
                                result.missing, options.drain_seconds));
  return lines;
}

}  // namespace santral::loadgen
