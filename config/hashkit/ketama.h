#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "config/hashkit/ring_node.h"

namespace santral::hashkit {

// Consistent hashing with virtual nodes, point for point as twemproxy's ketama distribution
// (src/hashkit/nc_ketama.c): each shard gets points in proportion to its weight, each point is
// a slice of an MD5 of "<name>-<n>", and a key belongs to the first point at or after its hash.
class KetamaRing {
 public:
  explicit KetamaRing(std::span<const RingNode> nodes);

  // Index (into the nodes given to the constructor) of the shard owning `hash`.
  std::size_t locate(std::uint32_t hash) const;

  struct Point {
    std::uint32_t value;
    std::uint32_t node;
  };
  std::span<const Point> points() const { return points_; }

 private:
  std::vector<Point> points_;  // sorted by value
};

}  // namespace santral::hashkit
