#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/salting_config.h"
#include "router/hotkeys/detection/hot_key_sketch.h"
#include "router/hotkeys/salting/salted_layout.h"

namespace santral::router {

// A key's estimated request rate, as one worker or all of them saw it.
struct HotKeyRate {
  std::string key;
  double ops = 0;  // requests per second (an upper estimate, see HotKeySketch)
  double reads = 0;
  double writes = 0;
  std::uint32_t salts = 0;                // sub-keys when salted, else 0
  std::string shard;                      // the shard that owns the key (its base key when salted)
  bool cached = false;                    // in the near cache (of any worker)
  SaltedBy salted_by = SaltedBy::Config;  // when salted: who salted it
  bool non_counter = false;               // some sampled access was not a counter command
};

// One worker's hot-key detection: one request in `sample_every` that names a key has its first
// key counted in a Space-Saving sketch. Counting happens in windows of `window_s` seconds; rates
// are taken over the current window and the one before it, so they follow a shift in traffic
// within two windows. Used only on its worker's thread: no locks.
class HotKeyDetector {
 public:
  using Clock = std::chrono::steady_clock;

  explicit HotKeyDetector(const config::HotKeySettings& settings, Clock::time_point now);

  // A reload: new settings; the counts restart when the sketch size changes.
  void configure(const config::HotKeySettings& settings, Clock::time_point now);

  // Whether this request is the one in `sample_every` to count (cheap: a countdown).
  bool due() {
    if (!enabled_ || --countdown_ != 0) return false;
    countdown_ = sample_every_;
    return true;
  }
  void record(std::string_view key, bool write, bool counter = true) {
    current_.add(key, sample_every_, write, counter);
  }
  // Called on the worker's tick: starts a new window when the current one is over.
  void rotate(Clock::time_point now);

  // The tracked keys with their rates, hottest first.
  std::vector<HotKeyRate> rates(Clock::time_point now) const;
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  std::uint32_t sample_every_;
  std::uint32_t countdown_;
  Clock::duration window_;
  HotKeySketch current_;
  HotKeySketch previous_;
  Clock::time_point current_start_;
  Clock::time_point previous_start_;
  bool has_previous_ = false;
};

// Adds `more` into `into`, key by key (rates of several workers), and sorts hottest first.
void merge_rates(std::vector<HotKeyRate>& into, std::vector<HotKeyRate> more);

}  // namespace santral::router
