#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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

  explicit HotKeySketch(std::size_t capacity) : capacity_(capacity) {}

  // `counter`: the access was a counter command (router/hotkeys/salted_route.h).
  void add(std::string_view key, std::uint64_t weight, bool write, bool counter = true);
  void clear();
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t capacity() const { return capacity_; }

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };

  std::size_t capacity_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::uint32_t, KeyHash, std::equal_to<>> index_;
};

}  // namespace santral::router
