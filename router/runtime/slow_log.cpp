#include "router/runtime/slow_log.h"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/redacted_arguments.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace {

constexpr std::size_t kMaxArgs = 32;
constexpr std::size_t kMaxArgBytes = 128;

void append_arg(SlowArgs& out, std::string_view arg) {
  out.push_back(static_cast<char>(static_cast<unsigned char>(arg.size())));
  out.insert(out.end(), arg.begin(), arg.end());
}

// Calls `each` for every argument a SlowTrace::args holds.
template <typename Each>
void for_each_arg(std::string_view args, Each&& each) {
  std::size_t at = 0;
  while (at < args.size()) {
    auto size = static_cast<unsigned char>(args[at]);
    each(args.substr(at + 1, size));
    at += 1 + size;
  }
}

std::int64_t micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

}  // namespace

void slow_args(std::span<const std::string_view> args, SlowArgs& out) {
  out.clear();
  std::size_t kept = std::min(args.size(), kMaxArgs);
  if (args.size() > kMaxArgs) kept = kMaxArgs - 1;
  std::uint64_t hidden = 0;  // bit i: argument i is a secret (kept <= 32)
  protocol::for_each_redacted(args, [&hidden](std::size_t i) {
    if (i < kMaxArgs) hidden |= std::uint64_t{1} << i;
  });
  for (std::size_t i = 0; i < kept; ++i) {
    auto arg = (hidden >> i & 1) != 0 ? protocol::kRedacted : args[i];
    if (arg.size() <= kMaxArgBytes) {
      append_arg(out, arg);
    } else {
      append_arg(out, fmt::format("{}... ({} more bytes)", arg.substr(0, kMaxArgBytes),
                                  arg.size() - kMaxArgBytes));
    }
  }
  if (args.size() > kMaxArgs)
    append_arg(out, fmt::format("... ({} more arguments)", args.size() - kept));
}

std::string slow_measure(const SlowTrace& trace,
                         const std::function<std::string(std::size_t)>& shard_name) {
  // One part per shard: a split request's fragments on one shard count as the longest.
  boost::container::small_vector<ShardTiming, 4> shards;
  for (const auto& timing : trace.shards) {
    auto same = std::find_if(shards.begin(), shards.end(),
                             [&](const ShardTiming& s) { return s.shard == timing.shard; });
    if (same == shards.end()) {
      shards.push_back(timing);
    } else {
      same->held = std::max(same->held, timing.held);
      same->waited = std::max(same->waited, timing.waited);
    }
  }
  std::sort(shards.begin(), shards.end(),
            [](const ShardTiming& a, const ShardTiming& b) { return a.waited > b.waited; });
  std::string out = "santral:";
  const char* separator = " ";
  for (const auto& s : shards) {
    out += fmt::format("{}{} waited {}us", separator, shard_name(s.shard), micros(s.waited));
    if (s.held.count() > 0) out += fmt::format(" after {}us held for a failover", micros(s.held));
    separator = ", ";
  }
  if (trace.queued.count() > 0)
    out += fmt::format("{}queued {}us behind {}", separator, micros(trace.queued),
                       trace.queued_behind_pull ? "a pull of its keys" : "earlier replies");
  if (shards.empty() && trace.queued.count() == 0) out += " answered by Santral";
  return out;
}

void write_slow_entry(protocol::RespWriter& out, const SlowEntry& entry) {
  std::size_t argc = 0;
  for_each_arg(entry.args, [&](std::string_view) { ++argc; });
  out.array_header(6);
  out.integer(static_cast<std::int64_t>(entry.id));
  out.integer(entry.unix_time);
  out.integer(entry.duration_us);
  out.array_header(argc + 1);
  for_each_arg(entry.args, [&](std::string_view arg) { out.bulk(arg); });
  out.bulk(entry.measure);
  out.bulk(entry.client_addr);
  out.bulk(entry.client_name);
}

void SlowLog::add(SlowEntry entry, std::size_t max_len) {
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowEntry> SlowLog::newest(std::size_t count) const {
  count = std::min(count, entries_.size());
  return {entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(count)};
}

}  // namespace santral::router
