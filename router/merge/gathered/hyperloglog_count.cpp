#include "router/merge/gathered/hyperloglog_count.h"

#include <cmath>

namespace santral::router {
namespace {

constexpr std::size_t kHeaderSize = 16;  // "HYLL", encoding, 3 unused bytes, cached cardinality
constexpr int kBits = 6;
constexpr std::size_t kDenseSize = kHeaderSize + (kHllRegisters * kBits + 7) / 8;
constexpr int kQ = 64 - 14;
constexpr std::uint8_t kDense = 0;
constexpr std::uint8_t kSparse = 1;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

std::uint8_t byte_at(std::string_view value, std::size_t i) {
  // Redis reads one byte past the end (the sds terminator, 0) for the last dense register and
  // for a truncated XZERO opcode.
  return i < value.size() ? static_cast<std::uint8_t>(value[i]) : 0;
}

double hll_sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prime;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double hll_tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prime != z);
  return z / 3;
}

}  // namespace

bool is_hyperloglog(std::string_view value) {
  if (value.size() < kHeaderSize) return false;
  if (value.substr(0, 4) != "HYLL") return false;
  auto encoding = static_cast<std::uint8_t>(value[4]);
  if (encoding > kSparse) return false;
  return encoding != kDense || value.size() == kDenseSize;
}

bool hll_merge(HllRegisters& max, std::string_view value) {
  if (static_cast<std::uint8_t>(value[4]) == kDense) {
    for (std::size_t i = 0; i < kHllRegisters; ++i) {
      std::size_t byte = kHeaderSize + i * kBits / 8;
      unsigned fb = i * kBits & 7;
      unsigned fb8 = 8 - fb;
      unsigned long b0 = byte_at(value, byte);
      unsigned long b1 = byte_at(value, byte + 1);
      auto reg = static_cast<std::uint8_t>(((b0 >> fb) | (b1 << fb8)) & 63);
      if (reg > max[i]) max[i] = reg;
    }
    return true;
  }
  std::size_t p = kHeaderSize;
  std::size_t i = 0;
  while (p < value.size()) {
    std::uint8_t op = byte_at(value, p);
    if ((op & 0xc0) == 0) {  // ZERO: 00xxxxxx, a run of up to 64 empty registers
      i += (op & 0x3f) + 1;
      p += 1;
    } else if ((op & 0xc0) == 0x40) {  // XZERO: 01xxxxxx yyyyyyyy, up to 16384
      i += (((op & 0x3f) << 8) | byte_at(value, p + 1)) + 1;
      p += 2;
    } else {  // VAL: 1vvvvvxx, a run of up to 4 registers holding v+1
      std::size_t runlen = (op & 0x3) + 1;
      auto regval = static_cast<std::uint8_t>(((op >> 2) & 0x1f) + 1);
      if (runlen + i > kHllRegisters) break;
      while (runlen--) {
        if (regval > max[i]) max[i] = regval;
        i++;
      }
      p += 1;
    }
  }
  return i == kHllRegisters;
}

std::uint64_t hll_count(const HllRegisters& registers) {
  double m = kHllRegisters;
  int histogram[64] = {0};
  for (std::uint8_t reg : registers) histogram[reg & 63]++;
  double z = m * hll_tau((m - histogram[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * hll_sigma(histogram[0] / m);
  return static_cast<std::uint64_t>(std::llroundl(kAlphaInf * m * m / z));
}

}  // namespace santral::router
