#include "router/hotkeys/detection/hot_key_sketch.h"

#include <algorithm>

namespace santral::router {

HotKeySketch::HotKeySketch(std::size_t capacity) : capacity_(capacity) {
  entries_.reserve(capacity_);
  index_.reserve(capacity_);
}

void HotKeySketch::add(std::string_view key, std::uint64_t weight, bool write, bool counter) {
  auto found = index_.find(key);
  std::uint32_t at = 0;
  if (found != index_.end()) {
    at = found->second;
  } else if (entries_.size() < capacity_) {
    at = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back({std::string(key), 0, 0, 0, 0, false});
    index_.emplace(entries_.back().key, at);
  } else {
    // The least counted key makes room; a linear scan is cheap at sketch sizes and sampled
    // rates, and keeps the structure two flat containers.
    auto least = std::min_element(entries_.begin(), entries_.end(),
                                  [](const Entry& a, const Entry& b) { return a.count < b.count; });
    at = static_cast<std::uint32_t>(least - entries_.begin());
    index_.erase(least->key);
    least->key.assign(key);
    least->overcount = least->count;
    least->reads = least->writes = 0;
    least->non_counter = false;
    index_.emplace(least->key, at);
  }
  Entry& entry = entries_[at];
  entry.count += weight;
  (write ? entry.writes : entry.reads) += weight;
  entry.non_counter |= !counter;
}

void HotKeySketch::clear() {
  entries_.clear();
  index_.clear();
}

}  // namespace santral::router
