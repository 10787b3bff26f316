#include "router/merge/gathered/set_algebra.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_set>

#include "router/merge/gathered/redis_numbers.h"

namespace santral::router {
namespace {

using Members = std::unordered_set<std::string_view>;

Members members_of(const SetMembers& set) {
  Members members;
  members.reserve(set.size());
  members.insert(set.begin(), set.end());
  return members;
}

// Whether a set holding exactly `members` would be an intset.
bool fits_intset(std::span<const std::string_view> members) {
  if (members.size() > kSetMaxIntsetEntries) return false;
  return std::all_of(members.begin(), members.end(),
                     [](std::string_view m) { return redis_integer(m).has_value(); });
}

void sort_numerically(std::vector<std::string_view>& members) {
  std::sort(members.begin(), members.end(), [](std::string_view a, std::string_view b) {
    return *redis_integer(a) < *redis_integer(b);
  });
}

// The inputs' indexes, smallest first; equal sizes keep their order (glibc's qsort is a
// merge sort, stable).
std::vector<std::size_t> by_cardinality(std::span<const SetMembers> sets) {
  std::vector<std::size_t> order(sets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sets[a].size() < sets[b].size(); });
  return order;
}

// Walks the smallest set and calls found(member) for each member every other set has, until
// found returns false.
template <typename Found>
void walk_intersection(std::span<const SetMembers> sets, Found found) {
  if (sets.empty()) return;
  for (const auto& set : sets)
    if (set.empty()) return;  // a missing key: Redis answers at once
  auto order = by_cardinality(sets);
  std::vector<Members> others;
  others.reserve(order.size() - 1);
  for (std::size_t i = 1; i < order.size(); ++i) others.push_back(members_of(sets[order[i]]));
  for (std::string_view member : sets[order[0]]) {
    bool everywhere = std::all_of(others.begin(), others.end(),
                                  [&](const Members& other) { return other.contains(member); });
    if (everywhere && !found(member)) return;
  }
}

}  // namespace

std::vector<std::string_view> set_inter(std::span<const SetMembers> sets) {
  std::vector<std::string_view> result;
  walk_intersection(sets, [&](std::string_view member) {
    result.push_back(member);
    return true;
  });
  return result;
}

std::size_t set_inter_card(std::span<const SetMembers> sets, std::size_t limit) {
  std::size_t count = 0;
  walk_intersection(sets, [&](std::string_view) { return ++count != limit; });
  return count;
}

std::vector<std::string_view> set_union(std::span<const SetMembers> sets) {
  std::vector<std::string_view> result;
  Members seen;
  for (const auto& set : sets)
    for (std::string_view member : set)
      if (seen.insert(member).second) result.push_back(member);
  if (fits_intset(result)) sort_numerically(result);
  return result;
}

std::vector<std::string_view> set_diff(std::span<const SetMembers> sets) {
  std::vector<std::string_view> result;
  if (sets.empty() || sets[0].empty()) return result;
  // Redis chooses between two algorithms by their cost; the second one starts from a copy of
  // the first set, so the result is an intset only if the first set fits one.
  std::size_t algo_one = 0;
  std::size_t algo_two = 0;
  for (const auto& set : sets) {
    if (set.empty()) continue;
    algo_one += sets[0].size();
    algo_two += set.size();
  }
  algo_one /= 2;
  bool first_algorithm = algo_one <= algo_two;
  std::vector<Members> others;
  others.reserve(sets.size() - 1);
  for (std::size_t i = 1; i < sets.size(); ++i) others.push_back(members_of(sets[i]));
  for (std::string_view member : sets[0]) {
    bool elsewhere = std::any_of(others.begin(), others.end(),
                                 [&](const Members& other) { return other.contains(member); });
    if (!elsewhere) result.push_back(member);
  }
  bool intset = first_algorithm ? fits_intset(result) : fits_intset(sets[0]);
  if (intset) sort_numerically(result);
  return result;
}

}  // namespace santral::router
