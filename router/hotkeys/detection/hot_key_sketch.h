#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

namespace santral::router {

// Space-Saving top-K (Metwally, Agrawal, El Abbadi 2005): at most `capacity` keys are counted.
// A key not yet counted, once the sketch is full, takes the place of the least counted key and
// starts from its count, which it may not deserve: `overcount` says by how much at most. Any
// key seen more than total/capacity times is guaranteed to be in the sketch.
class HotKeySketch {
 public:
  struct Entry {
    std::string key;
    std::uint64_t count = 0;      // an upper bound of the key's true count
    std::uint64_t overcount = 0;  // count - overcount is a lower bound
    std::uint64_t reads = 0;      // what was seen of the key itself, split by kind
    std::uint64_t writes = 0;
    bool non_counter = false;  // a sampled access was not a counter command (auto-salting)
  };

  // Room for `capacity` keys is taken at once: counting allocates nothing after that (but a
  // key longer than a string holds inline, the first time its entry holds one).
  explicit HotKeySketch(std::size_t capacity);
  // index_ views the keys in entries_: moved, never copied.
  HotKeySketch(HotKeySketch&&) noexcept = default;
  HotKeySketch& operator=(HotKeySketch&&) noexcept = default;
  HotKeySketch(const HotKeySketch&) = delete;
  HotKeySketch& operator=(const HotKeySketch&) = delete;

  // `counter`: the access was a counter command (router/hotkeys/salting/salted_route.h).
  void add(std::string_view key, std::uint64_t weight, bool write, bool counter = true);
  void clear();
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::vector<Entry> entries_;  // reserved to capacity_: never moves, so index_ may view it
  boost::unordered_flat_map<std::string_view, std::uint32_t> index_;  // key -> its entry
};

}  // namespace santral::router
