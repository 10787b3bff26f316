#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace santral::router {

// ZUNION, ZINTER, ZDIFF and ZINTERCARD, computed as Redis 7.0's zunionInterDiffGenericCommand
// does (src/t_zset.c). A plain set takes part with every score 1; a missing key is empty.
struct ScoredMember {
  std::string_view member;
  double score = 0;
};

struct ZsetSource {
  std::vector<ScoredMember> members;  // as fetched (ZRANGE ... WITHSCORES, or SMEMBERS)
  double weight = 1;
};

enum class Aggregate { Sum, Min, Max };

// The results are in Redis's zset order: by score, then by the members' bytes.
std::vector<ScoredMember> zset_union(std::vector<ZsetSource> sources, Aggregate aggregate);
std::vector<ScoredMember> zset_inter(std::vector<ZsetSource> sources, Aggregate aggregate);
// Counts no further than `limit` (0: no limit).
std::size_t zset_inter_card(std::vector<ZsetSource> sources, std::size_t limit);
// The first source's members that no other source has, with the first source's scores.
std::vector<ScoredMember> zset_diff(const std::vector<ZsetSource>& sources);

}  // namespace santral::router
