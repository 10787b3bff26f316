#include "router/merge/gathered/lcs.h"

namespace santral::router {

bool lcs_table_fits(std::string_view a, std::string_view b) {
  unsigned long long cells = (a.size() + 1ull) * (b.size() + 1ull);
  return cells * sizeof(std::uint32_t) <= kLcsMaxTableBytes;
}

LcsResult lcs(std::string_view a, std::string_view b, bool walk, long long min_match_len) {
  auto alen = static_cast<std::uint32_t>(a.size());
  auto blen = static_cast<std::uint32_t>(b.size());
  std::vector<std::uint32_t> table((alen + 1ull) * (blen + 1ull), 0);
  auto at = [&](std::uint32_t i, std::uint32_t j) -> std::uint32_t& {
    return table[j + static_cast<std::size_t>(i) * (blen + 1)];
  };
  for (std::uint32_t i = 1; i <= alen; i++) {
    for (std::uint32_t j = 1; j <= blen; j++) {
      if (a[i - 1] == b[j - 1]) {
        at(i, j) = at(i - 1, j - 1) + 1;
      } else {
        std::uint32_t lcs1 = at(i - 1, j);
        std::uint32_t lcs2 = at(i, j - 1);
        at(i, j) = lcs1 > lcs2 ? lcs1 : lcs2;
      }
    }
  }
  LcsResult result;
  result.length = at(alen, blen);
  if (!walk) return result;

  std::uint32_t idx = result.length;
  result.sequence.assign(idx, '\0');
  // arange_start == alen: no range is open.
  std::uint32_t arange_start = alen, arange_end = 0, brange_start = 0, brange_end = 0;
  std::uint32_t i = alen, j = blen;
  while (i > 0 && j > 0) {
    bool emit_range = false;
    if (a[i - 1] == b[j - 1]) {
      result.sequence[idx - 1] = a[i - 1];
      if (arange_start == alen) {
        arange_start = i - 1;
        arange_end = i - 1;
        brange_start = j - 1;
        brange_end = j - 1;
      } else if (arange_start == i && brange_start == j) {
        arange_start--;
        brange_start--;
      } else {
        emit_range = true;
      }
      // A match on the first byte of either string ends the walk: emit it now.
      if (arange_start == 0 || brange_start == 0) emit_range = true;
      idx--;
      i--;
      j--;
    } else {
      std::uint32_t lcs1 = at(i - 1, j);
      std::uint32_t lcs2 = at(i, j - 1);
      if (lcs1 > lcs2)
        i--;
      else
        j--;
      if (arange_start != alen) emit_range = true;
    }
    std::uint32_t match_len = arange_end - arange_start + 1;
    if (emit_range) {
      if (min_match_len == 0 || match_len >= min_match_len)
        result.matches.push_back({arange_start, arange_end, brange_start, brange_end, match_len});
      arange_start = alen;
    }
  }
  return result;
}

}  // namespace santral::router
