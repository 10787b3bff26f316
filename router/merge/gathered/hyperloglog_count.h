#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace santral::router {

// PFCOUNT of several keys, as Redis 7.0 computes it (src/hyperloglog.c): each key's registers
// (dense or sparse) merged into one by taking the maximum, as PFMERGE does, then counted with
// the "new" cardinality estimator (Ertl, arXiv:1702.01284: hllSigma, hllTau).
inline constexpr std::size_t kHllRegisters = 16384;  // 2^14
using HllRegisters = std::array<std::uint8_t, kHllRegisters>;

// isHLLObjectOrReply() without the type check: the header's magic "HYLL", a known encoding,
// and a dense value's exact size.
bool is_hyperloglog(std::string_view value);
// hllMerge(): false when a sparse value does not cover exactly every register (Redis's
// "INVALIDOBJ Corrupted HLL object detected").
bool hll_merge(HllRegisters& max, std::string_view value);
// hllCount() of raw registers.
std::uint64_t hll_count(const HllRegisters& registers);

}  // namespace santral::router
