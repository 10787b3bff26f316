#include "router/analysis/key_figures.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace santral::router {

namespace {

// HyperLogLog with 2^12 registers (about 1.6% error): distinct values without keeping them.
class DistinctValues {
 public:
  void add(std::string_view value) {
    // std::hash of a string_view is a full 64-bit hash of its bytes (libstdc++'s _Hash_bytes);
    // one more mixing step spreads it over both halves used below.
    std::uint64_t h = std::hash<std::string_view>{}(value);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    auto index = static_cast<std::size_t>(h >> (64 - kBits));
    std::uint64_t rest = (h << kBits) | (std::uint64_t{1} << (kBits - 1));
    auto rank = static_cast<std::uint8_t>(std::countl_zero(rest) + 1);
    registers_[index] = std::max(registers_[index], rank);
  }
  double estimate() const {
    constexpr double m = kRegisters;
    double sum = 0;
    std::size_t zeros = 0;
    for (auto r : registers_) {
      sum += std::ldexp(1.0, -r);
      if (r == 0) ++zeros;
    }
    double raw = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    if (raw <= 2.5 * m && zeros > 0) return m * std::log(m / static_cast<double>(zeros));
    return raw;
  }

 private:
  static constexpr int kBits = 12;
  static constexpr std::size_t kRegisters = std::size_t{1} << kBits;
  std::array<std::uint8_t, kRegisters> registers_{};
};

constexpr std::size_t kTopValues = 5;
constexpr std::size_t kFewestNewKeys = 16;

}  // namespace

std::optional<double> order_correlation(std::span<const double> ys) {
  const auto n = static_cast<double>(ys.size());
  if (ys.size() < 2) return std::nullopt;
  double mean_x = (n - 1) / 2, mean_y = 0;
  for (double y : ys) mean_y += y / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    double dx = static_cast<double>(i) - mean_x, dy = ys[i] - mean_y;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

KeyFigures key_figures(const KeyValues& values, std::span<const SampledRequest* const> requests,
                       std::span<const StoredKey* const> stored, std::size_t shards) {
  KeyFigures out;
  out.name = values.name();
  DistinctValues distinct;
  std::unordered_map<std::string_view, std::uint64_t> counts;
  bool numeric = true;
  bool any = false;
  for (const auto* request : requests) {
    auto value = values.of(request->key);
    if (!value) continue;
    ++out.accesses;
    ++counts[*value];
    distinct.add(*value);
    numeric = numeric && whole_number(*value).has_value();
    any = true;
  }
  bool stored_values = false;
  for (const auto* key : stored) {
    auto value = values.of(key->key);
    if (!value) continue;
    stored_values = true;
    distinct.add(*value);
    numeric = numeric && whole_number(*value).has_value();
    any = true;
  }
  out.numeric = numeric && any;
  // Exact when only requests had values (they are counted anyway); with the shards' keys, the
  // sketch's estimate, never fewer than the requests' own values.
  out.distinct = stored_values ? std::max(distinct.estimate(), static_cast<double>(counts.size()))
                               : static_cast<double>(counts.size());

  std::vector<std::pair<std::string_view, std::uint64_t>> ranked(counts.begin(), counts.end());
  auto top = std::min(kTopValues, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(top), ranked.end(),
                    [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  for (std::size_t i = 0; i < top; ++i)
    out.top.emplace_back(std::string(ranked[i].first),
                         static_cast<double>(ranked[i].second) /
                             static_cast<double>(std::max<std::uint64_t>(out.accesses, 1)));

  // Monotonicity: the first write of each key, in the order the requests arrived.
  std::vector<const SampledRequest*> ordered(requests.begin(), requests.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* a, const auto* b) { return a->at_us < b->at_us; });
  std::unordered_set<std::string_view> seen;
  std::vector<std::string_view> arrivals;
  for (const auto* request : ordered) {
    if (!seen.insert(request->key).second || !request->write) continue;
    if (auto value = values.of(request->key)) arrivals.push_back(*value);
  }
  out.new_keys = arrivals.size();
  if (arrivals.size() >= kFewestNewKeys) {
    std::vector<double> ys;
    ys.reserve(arrivals.size());
    if (out.numeric) {
      for (auto v : arrivals) ys.push_back(static_cast<double>(*whole_number(v)));
    } else {  // text: its rank among the values
      std::vector<std::string_view> sorted(arrivals);
      std::sort(sorted.begin(), sorted.end());
      for (auto v : arrivals)
        ys.push_back(static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), v) -
                                         sorted.begin()));
    }
    out.monotonicity = order_correlation(ys);
  }
  out.monotonic = out.monotonicity && std::abs(*out.monotonicity) >= kMonotonic;
  out.low_cardinality =
      any && out.distinct < kValuesPerShard * static_cast<double>(std::max<std::size_t>(shards, 1));
  return out;
}

}  // namespace santral::router
