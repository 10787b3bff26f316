#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace santral::router {

// LCS of two strings, as Redis 7.0's lcsCommand computes it (src/t_string.c): the dynamic
// programming table, then a walk back from its end that prefers to step back in the first
// string only when that keeps a strictly longer LCS, and the matching ranges in the order the
// walk finds them (last first).
struct LcsMatch {
  std::uint32_t a_start = 0, a_end = 0, b_start = 0, b_end = 0;
  std::uint32_t length = 0;
};

struct LcsResult {
  std::string sequence;  // filled when asked for
  std::uint32_t length = 0;
  std::vector<LcsMatch> matches;  // ranges at least min_match_len long, when asked for
};

// Redis refuses a table larger than proto-max-bulk-len (512 MiB by default).
inline constexpr unsigned long long kLcsMaxTableBytes = 512ull * 1024 * 1024;
bool lcs_table_fits(std::string_view a, std::string_view b);

LcsResult lcs(std::string_view a, std::string_view b, bool walk, long long min_match_len);

}  // namespace santral::router
