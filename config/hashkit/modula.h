#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "config/hashkit/ring_node.h"

namespace santral::hashkit {

// twemproxy's modula distribution (src/hashkit/nc_modula.c): a shard of weight w owns w slots;
// a key goes to slot hash % total_weight.
class ModulaTable {
 public:
  explicit ModulaTable(std::span<const RingNode> nodes);

  std::size_t locate(std::uint32_t hash) const;
  std::size_t slot_count() const { return slots_.size(); }
  std::span<const std::uint32_t> slots() const { return slots_; }  // slot -> node index

 private:
  std::vector<std::uint32_t> slots_;  // slot -> node index
};

}  // namespace santral::hashkit
