#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace santral::router {

// SINTER, SUNION, SDIFF and SINTERCARD over sets fetched with SMEMBERS, computed as Redis 7.0's
// sinterGenericCommand and sunionDiffGenericCommand do (src/t_set.c). Each input is a key's
// members in the order SMEMBERS gave them; a missing key is an empty input.
//
// Order: Redis's own order where it is deterministic. SINTER walks the smallest set (the
// first of the smallest, as glibc's stable qsort leaves them), so its members come in that
// set's SMEMBERS order: ascending for an intset. SUNION and SDIFF build a new set and answer in
// its order: ascending numbers when it is an intset (every member an integer, at most
// set-max-intset-entries of them, 512 by default); otherwise Redis's order is its hash table's
// and unspecified, and Santral answers in the order it first met the members.
using SetMembers = std::vector<std::string_view>;

inline constexpr std::size_t kSetMaxIntsetEntries = 512;

std::vector<std::string_view> set_inter(std::span<const SetMembers> sets);
// The size of the intersection, counting no further than `limit` (0: no limit).
std::size_t set_inter_card(std::span<const SetMembers> sets, std::size_t limit);
std::vector<std::string_view> set_union(std::span<const SetMembers> sets);
std::vector<std::string_view> set_diff(std::span<const SetMembers> sets);

}  // namespace santral::router
