#include "config/namespace/range_table.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace santral::config {
namespace {

// The first string after every string that starts with `prefix`; nullopt when there is none.
std::optional<std::string> successor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xff) s.pop_back();
  if (s.empty()) return std::nullopt;
  s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

// The integers whose decimal text starts with `prefix`, as closed intervals (one per length);
// nullopt when that set is not worth describing (a leading zero or a bare "-").
std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> numbers_with_prefix(
    std::string_view prefix) {
  bool negative = !prefix.empty() && prefix.front() == '-';
  std::string_view digits = negative ? prefix.substr(1) : prefix;
  if (digits.empty() || digits.front() == '0') return std::nullopt;
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      digits.size() > 19)
    return out;
  // Magnitudes: up to 2^63 - 1, or 2^63 for negative numbers (C++20 converts modulo 2^64).
  const std::uint64_t limit = (std::uint64_t{1} << 63) - (negative ? 0 : 1);
  std::uint64_t p = 0;
  for (char c : digits) p = p * 10 + static_cast<std::uint64_t>(c - '0');
  if (p > limit) return out;
  auto as_value = [negative](std::uint64_t magnitude) {
    return static_cast<std::int64_t>(negative ? 0 - magnitude : magnitude);
  };
  for (std::uint64_t scale = 1;;) {
    std::uint64_t lo = p * scale;
    std::uint64_t hi = scale - 1 > limit - lo ? limit : lo + (scale - 1);
    if (negative)
      out.emplace_back(as_value(hi), as_value(lo));
    else
      out.emplace_back(as_value(lo), as_value(hi));
    if (scale > limit / 10) break;
    scale *= 10;
    if (p > limit / scale) break;
  }
  return out;
}

}  // namespace

std::optional<std::int64_t> parse_int64(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

RangeTable::RangeTable(RangeOrder order, const std::vector<KeyRange>& ranges) : order_(order) {
  for (const auto& r : ranges) {
    Range range{r.from, r.to, std::nullopt, std::nullopt, r.shard};
    if (order_ == RangeOrder::Numeric) {
      if (r.from) range.low = parse_int64(*r.from);
      if (r.to) range.high = parse_int64(*r.to);
    }
    ranges_.push_back(std::move(range));
  }
}

std::optional<std::size_t> RangeTable::find(std::string_view shard_key) const {
  // Ranges are adjacent and sorted: the first one whose upper bound lies above the key is the
  // only candidate.
  if (order_ == RangeOrder::Lexical) {
    auto it = std::partition_point(ranges_.begin(), ranges_.end(),
                                   [&](const Range& r) { return r.to && *r.to <= shard_key; });
    if (it == ranges_.end() || (it->from && shard_key < *it->from)) return std::nullopt;
    return static_cast<std::size_t>(it - ranges_.begin());
  }
  auto number = parse_int64(shard_key);
  if (!number) return std::nullopt;
  auto it = std::partition_point(ranges_.begin(), ranges_.end(),
                                 [&](const Range& r) { return r.high && *r.high <= *number; });
  if (it == ranges_.end() || (it->low && *number < *it->low)) return std::nullopt;
  return static_cast<std::size_t>(it - ranges_.begin());
}

bool RangeTable::total() const {
  return order_ == RangeOrder::Lexical && !ranges_.front().from && !ranges_.back().to;
}

std::string RangeTable::label(std::size_t range) const {
  const Range& r = ranges_[range];
  return "[" + (r.from ? *r.from : std::string("-inf")) + ", " +
         (r.to ? *r.to : std::string("+inf")) + ")";
}

bool RangeTable::overlaps(const Range& r, std::int64_t lo, std::int64_t hi) const {
  return (!r.low || hi >= *r.low) && (!r.high || lo < *r.high);
}

std::vector<std::size_t> RangeTable::shards_for_prefix(std::string_view prefix) const {
  std::vector<std::size_t> out;
  if (order_ == RangeOrder::Lexical) {
    auto next = successor(prefix);
    for (const auto& r : ranges_)
      if ((!r.to || prefix < *r.to) && (!r.from || !next || *r.from < *next))
        out.push_back(r.shard);
  } else if (auto intervals = numbers_with_prefix(prefix)) {
    for (const auto& r : ranges_)
      for (auto [lo, hi] : *intervals)
        if (overlaps(r, lo, hi)) {
          out.push_back(r.shard);
          break;
        }
  } else {
    for (const auto& r : ranges_) out.push_back(r.shard);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::string> RangeTable::lower_bound(std::size_t range) const {
  const Range& r = ranges_[range];
  if (r.low) return std::to_string(*r.low);
  return r.from;
}

}  // namespace santral::config
