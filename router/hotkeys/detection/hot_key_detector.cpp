#include "router/hotkeys/detection/hot_key_detector.h"

#include <algorithm>
#include <unordered_map>

namespace santral::router {

HotKeyDetector::HotKeyDetector(const config::HotKeySettings& settings, Clock::time_point now)
    : enabled_(settings.enabled),
      sample_every_(settings.sample_every),
      countdown_(settings.sample_every),
      window_(std::chrono::seconds(settings.window_s)),
      current_(settings.capacity),
      previous_(settings.capacity),
      current_start_(now),
      previous_start_(now) {}

void HotKeyDetector::configure(const config::HotKeySettings& settings, Clock::time_point now) {
  bool restart = settings.capacity != current_.capacity() || settings.sample_every != sample_every_;
  enabled_ = settings.enabled;
  sample_every_ = settings.sample_every;
  countdown_ = sample_every_;
  window_ = std::chrono::seconds(settings.window_s);
  if (!restart) return;
  current_ = HotKeySketch(settings.capacity);
  previous_ = HotKeySketch(settings.capacity);
  current_start_ = previous_start_ = now;
  has_previous_ = false;
}

void HotKeyDetector::rotate(Clock::time_point now) {
  if (now - current_start_ < window_) return;
  std::swap(previous_, current_);
  current_.clear();
  previous_start_ = current_start_;
  current_start_ = now;
  has_previous_ = true;
}

std::vector<HotKeyRate> HotKeyDetector::rates(Clock::time_point now) const {
  Clock::time_point since = has_previous_ ? previous_start_ : current_start_;
  double seconds = std::max(std::chrono::duration<double>(now - since).count(), 1e-3);
  std::vector<HotKeyRate> out;
  std::unordered_map<std::string_view, std::size_t> at;
  auto add = [&](const HotKeySketch& sketch) {
    for (const auto& entry : sketch.entries()) {
      auto [it, fresh] = at.try_emplace(entry.key, out.size());
      if (fresh) out.push_back({entry.key, 0, 0, 0, 0, {}, false, SaltedBy::Config, false});
      HotKeyRate& rate = out[it->second];
      double seen = static_cast<double>(entry.reads + entry.writes);
      double ops = static_cast<double>(entry.count) / seconds;
      rate.ops += ops;
      rate.non_counter = rate.non_counter || entry.non_counter;
      // The overcount is not attributed to reads or writes: split in the proportion seen.
      if (seen > 0) {
        rate.reads += ops * static_cast<double>(entry.reads) / seen;
        rate.writes += ops * static_cast<double>(entry.writes) / seen;
      }
    }
  };
  add(current_);
  if (has_previous_) add(previous_);
  std::sort(out.begin(), out.end(),
            [](const HotKeyRate& a, const HotKeyRate& b) { return a.ops > b.ops; });
  return out;
}

void merge_rates(std::vector<HotKeyRate>& into, std::vector<HotKeyRate> more) {
  std::unordered_map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < into.size(); ++i) at.emplace(into[i].key, i);
  for (auto& rate : more) {
    auto found = at.find(rate.key);
    if (found == at.end()) {
      at.emplace(rate.key, into.size());
      into.push_back(std::move(rate));
      continue;
    }
    HotKeyRate& sum = into[found->second];
    sum.ops += rate.ops;
    sum.reads += rate.reads;
    sum.writes += rate.writes;
    if (rate.salts > sum.salts) sum.salted_by = rate.salted_by;
    sum.salts = std::max(sum.salts, rate.salts);
    sum.cached = sum.cached || rate.cached;
    sum.non_counter = sum.non_counter || rate.non_counter;
  }
  std::sort(into.begin(), into.end(),
            [](const HotKeyRate& a, const HotKeyRate& b) { return a.ops > b.ops; });
}

}  // namespace santral::router
