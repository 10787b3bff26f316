#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "config/hashkit/ring_node.h"

namespace santral::placement {

// Consistent hashing for namespaces: a shard of weight w gets w * vnodes points, each a 32-bit
// slice of MD5("<name>-<n>"); a hash belongs to the first point at or after it. Unlike
// hashkit::KetamaRing (twemproxy's exact point counts, kept for compatibility) the number of
// points per unit of weight is the operator's choice.
class HashRing {
 public:
  struct Member {
    hashkit::RingNode node;
    std::size_t shard;  // what locate() answers for this member
  };
  HashRing(std::span<const Member> members, std::uint32_t vnodes);

  std::size_t locate(std::uint32_t hash) const;
  std::size_t point_count() const { return points_.size(); }

  struct Point {
    std::uint32_t value;
    std::uint32_t shard;
  };
  // Sorted by value; a hash belongs to the first point at or after it (the admin API draws
  // the ring from these).
  std::span<const Point> points() const { return points_; }

 private:
  std::vector<Point> points_;  // sorted by value
};

}  // namespace santral::placement
