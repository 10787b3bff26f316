#include "router/backend/replica_freshness.h"

#include <charconv>

#include <fmt/format.h>

#include "router/merge/info_text.h"

namespace santral::router {

namespace {

// A number of INFO's text (router/merge/info_text.h); -1 when absent or not a number.
std::int64_t info_number(const std::vector<InfoSection>& info, std::string_view field) {
  auto text = find_info_field(info, field);
  std::int64_t value = -1;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) return -1;
  return value;
}

constexpr std::size_t kMaxSamples = 4096;

}  // namespace

std::string ReplicaFreshness::State::why() const {
  std::lock_guard guard(lock_);
  return why_;
}

void ReplicaFreshness::State::set(Verdict v, std::int64_t lag, std::string why) {
  {
    std::lock_guard guard(lock_);
    why_ = std::move(why);
  }
  lag_ms.store(lag, std::memory_order_relaxed);
  verdict.store(v, std::memory_order_relaxed);
}

std::shared_ptr<ReplicaFreshness::State> ReplicaFreshness::state(const std::string& address) {
  std::lock_guard guard(lock_);
  auto& slot = states_[address];
  auto state = slot.lock();
  if (!state) {
    state = std::make_shared<State>();
    slot = state;
  }
  std::erase_if(states_, [](const auto& entry) { return entry.second.expired(); });
  return state;
}

ReplicaReading read_replica_info(std::string_view text) {
  auto info = parse_info_text(text);
  ReplicaReading out;
  out.is_replica = find_info_field(info, "role") == "slave";
  out.link_up = find_info_field(info, "master_link_status") == "up";
  out.syncing = find_info_field(info, "master_sync_in_progress") == "1";
  out.down_since_s = info_number(info, "master_link_down_since_seconds");
  out.offset = info_number(info, "slave_repl_offset");
  return out;
}

std::int64_t read_primary_offset(std::string_view text) {
  return info_number(parse_info_text(text), "master_repl_offset");
}

void OffsetHistory::add(Clock::time_point at, std::int64_t offset) {
  if (offset < 0) return;
  // A rise only: the first sample at each offset says since when the primary had it.
  if (!samples_.empty() && samples_.back().second >= offset) return;
  samples_.emplace_back(at, offset);
  if (samples_.size() > kMaxSamples) samples_.pop_front();
}

std::chrono::milliseconds OffsetHistory::behind(std::int64_t offset, Clock::time_point now) const {
  for (const auto& [at, primary] : samples_)
    if (primary > offset)
      return std::max(std::chrono::milliseconds(0),
                      std::chrono::duration_cast<std::chrono::milliseconds>(now - at));
  return std::chrono::milliseconds(0);
}

ReplicaJudgement judge_replica(const ReplicaReading& reading, const OffsetHistory& primary,
                               OffsetHistory::Clock::time_point now,
                               std::chrono::milliseconds max_lag) {
  using Verdict = ReplicaFreshness::Verdict;
  if (!reading.is_replica) return {Verdict::Stale, -1, "it is not a replica (INFO replication)"};
  if (reading.syncing)
    return {Verdict::Stale, -1,
            "it is syncing with its primary (master_sync_in_progress:1): its data is not whole"};
  if (!reading.link_up) {
    if (reading.down_since_s < 0)
      return {Verdict::Stale, -1, "it has not been in sync with its primary since it started"};
    std::int64_t lag = reading.down_since_s * 1000;
    if (max_lag.count() > 0 && lag > max_lag.count())
      return {Verdict::Stale, lag,
              fmt::format("its link to its primary is down for {} s (read_from.max_lag_ms: {})",
                          reading.down_since_s, max_lag.count())};
    return {Verdict::Fresh, lag,
            fmt::format("its link to its primary is down for {} s", reading.down_since_s)};
  }
  std::int64_t lag = primary.behind(reading.offset, now).count();
  if (max_lag.count() > 0 && lag > max_lag.count())
    return {Verdict::Stale, lag,
            fmt::format("it lacks writes its primary had {} ms ago (read_from.max_lag_ms: {})", lag,
                        max_lag.count())};
  return {Verdict::Fresh, lag, "in sync"};
}

}  // namespace santral::router
