#include "config/hashkit/modula.h"

#include <algorithm>
#include <numeric>

namespace santral::hashkit {

ModulaTable::ModulaTable(std::span<const RingNode> nodes) {
  // Slots follow twemproxy's server order, which is by name (shorter first, then bytewise), not
  // the order of the config file: twemproxy sorts its servers when it loads the config.
  std::vector<std::uint32_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto& x = nodes[a].name;
    const auto& y = nodes[b].name;
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  for (std::uint32_t index : order) slots_.insert(slots_.end(), nodes[index].weight, index);
}

std::size_t ModulaTable::locate(std::uint32_t hash) const {
  if (slots_.empty()) return 0;
  return slots_[hash % slots_.size()];
}

}  // namespace santral::hashkit
