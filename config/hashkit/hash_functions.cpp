#include "config/hashkit/hash_functions.h"

#include <md5.h>

#include <array>
#include <bit>
#include <boost/crc.hpp>
#include <cstring>

namespace santral::hashkit {
namespace {

// twemproxy reads keys through `const char*`, and x86-64's char is signed: several of its
// hashes therefore see a byte >= 0x80 sign-extended (0xE9 -> 0xFFFFFFE9). Keys with such bytes
// land where an x86-64 twemproxy puts them only if we do the same, so each function below
// states which view of a byte it uses.
std::uint32_t sign_extended32(char c) {
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<signed char>(c)));
}
std::uint64_t sign_extended64(char c) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<signed char>(c)));
}
std::uint32_t unsigned_byte(char c) {
  return static_cast<unsigned char>(c);
}

std::uint32_t little_endian16(const char* p) {
  return unsigned_byte(p[0]) | unsigned_byte(p[1]) << 8;
}
std::uint32_t little_endian32(const char* p) {
  return little_endian16(p) | little_endian16(p + 2) << 16;
}

// Bob Jenkins' lookup3 `hashlittle` state and mixing steps.
struct Lookup3 {
  std::uint32_t a, b, c;

  void mix() {
    a -= c, a ^= std::rotl(c, 4), c += b;
    b -= a, b ^= std::rotl(a, 6), a += c;
    c -= b, c ^= std::rotl(b, 8), b += a;
    a -= c, a ^= std::rotl(c, 16), c += b;
    b -= a, b ^= std::rotl(a, 19), a += c;
    c -= b, c ^= std::rotl(b, 4), b += a;
  }
  void finish() {
    c ^= b, c -= std::rotl(b, 14);
    a ^= c, a -= std::rotl(c, 11);
    b ^= a, b -= std::rotl(a, 25);
    c ^= b, c -= std::rotl(b, 16);
    a ^= c, a -= std::rotl(c, 4);
    b ^= a, b -= std::rotl(a, 14);
    c ^= b, c -= std::rotl(b, 24);
  }
};

constexpr std::uint32_t kFnv32Offset = 0x811c9dc5;
constexpr std::uint32_t kFnv32Prime = 0x01000193;
constexpr std::uint64_t kFnv64Offset = 0xcbf29ce484222325;
constexpr std::uint64_t kFnv64Prime = 0x00000100000001b3;

}  // namespace

std::uint32_t one_at_a_time(std::string_view key) {
  std::uint32_t h = 0;
  for (char c : key) {
    h += sign_extended32(c);
    h += h << 10;
    h ^= h >> 6;
  }
  h += h << 3;
  h ^= h >> 11;
  h += h << 15;
  return h;
}

// The first four bytes of the MD5 digest, read little-endian.
std::uint32_t md5(std::string_view key) {
  MD5_CTX ctx;
  MD5Init(&ctx);
  MD5Update(&ctx, reinterpret_cast<const std::uint8_t*>(key.data()), key.size());
  std::array<std::uint8_t, MD5_DIGEST_LENGTH> digest;
  MD5Final(digest.data(), &ctx);
  return digest[0] | digest[1] << 8 | digest[2] << 16 | std::uint32_t{digest[3]} << 24;
}

// twemproxy 0.5.0's crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0) run in a
// 32-bit register that is never masked: the low 16 bits are the CRC, the high 16 bits keep
// what was shifted out. A CRC library only gives the low half, so the loop is ours.
// (Some twemproxy sources carry a CRC-16/ARC table here instead; the 0.5.0 release does not.)
std::uint32_t crc16(std::string_view key) {
  static constexpr auto kTable = [] {
    std::array<std::uint16_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i << 8;
      for (int bit = 0; bit < 8; ++bit) c = (c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1;
      table[i] = static_cast<std::uint16_t>(c);
    }
    return table;
  }();
  std::uint32_t crc = 0;
  for (char c : key) crc = (crc << 8) ^ kTable[((crc >> 8) ^ unsigned_byte(c)) & 0xff];
  return crc;
}

// libmemcached's "crc32": bits 16..30 of the standard CRC-32, so only 0..32767.
std::uint32_t crc32(std::string_view key) {
  return (crc32a(key) >> 16) & 0x7fff;
}

// The standard CRC-32 (ISO-HDLC, as zlib and Ethernet compute it).
std::uint32_t crc32a(std::string_view key) {
  boost::crc_32_type crc;
  crc.process_bytes(key.data(), key.size());
  return crc.checksum();
}

// The low 32 bits of FNV-1 64, bytes sign-extended to 64 bits.
std::uint32_t fnv1_64(std::string_view key) {
  std::uint64_t h = kFnv64Offset;
  for (char c : key) {
    h *= kFnv64Prime;
    h ^= sign_extended64(c);
  }
  return static_cast<std::uint32_t>(h);
}

// The low 32 bits of FNV-1a 64. (twemproxy computes it in a 32-bit register with the low
// halves of the 64-bit offset basis and prime, which gives the same bits.)
std::uint32_t fnv1a_64(std::string_view key) {
  std::uint64_t h = kFnv64Offset;
  for (char c : key) {
    h ^= sign_extended64(c);
    h *= kFnv64Prime;
  }
  return static_cast<std::uint32_t>(h);
}

std::uint32_t fnv1_32(std::string_view key) {
  std::uint32_t h = kFnv32Offset;
  for (char c : key) {
    h *= kFnv32Prime;
    h ^= sign_extended32(c);
  }
  return h;
}

std::uint32_t fnv1a_32(std::string_view key) {
  std::uint32_t h = kFnv32Offset;
  for (char c : key) {
    h ^= sign_extended32(c);
    h *= kFnv32Prime;
  }
  return h;
}

// Paul Hsieh's SuperFastHash; the odd third byte of a 3-byte tail is sign-extended.
std::uint32_t hsieh(std::string_view key) {
  if (key.empty()) return 0;
  const char* p = key.data();
  std::uint32_t h = 0;
  for (std::size_t blocks = key.size() / 4; blocks > 0; --blocks, p += 4) {
    h += little_endian16(p);
    h = (h << 16) ^ (little_endian16(p + 2) << 11) ^ h;
    h += h >> 11;
  }
  switch (key.size() % 4) {
    case 3:
      h += little_endian16(p);
      h ^= h << 16;
      h ^= sign_extended32(p[2]) << 18;
      h += h >> 11;
      break;
    case 2:
      h += little_endian16(p);
      h ^= h << 11;
      h += h >> 17;
      break;
    case 1:
      h += unsigned_byte(p[0]);
      h ^= h << 10;
      h += h >> 1;
      break;
  }
  h ^= h << 3;
  h += h >> 5;
  h ^= h << 4;
  h += h >> 17;
  h ^= h << 25;
  h += h >> 6;
  return h;
}

// MurmurHash2 with libmemcached's seed, 0xdeadbeef * length.
std::uint32_t murmur(std::string_view key) {
  constexpr std::uint32_t m = 0x5bd1e995;
  const auto length = static_cast<std::uint32_t>(key.size());
  std::uint32_t h = (0xdeadbeef * length) ^ length;
  const char* p = key.data();
  std::size_t left = key.size();
  for (; left >= 4; left -= 4, p += 4) {
    std::uint32_t k = little_endian32(p);
    k *= m;
    k ^= k >> 24;
    k *= m;
    h *= m;
    h ^= k;
  }
  if (left > 0) {
    if (left == 3) h ^= unsigned_byte(p[2]) << 16;
    if (left >= 2) h ^= unsigned_byte(p[1]) << 8;
    h ^= unsigned_byte(p[0]);
    h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h;
}

// lookup3 `hashlittle(key, length, 13)`. twemproxy picks 32-, 16- or 8-bit reads by the key's
// alignment; on a little-endian machine all three give this byte-wise result.
std::uint32_t jenkins(std::string_view key) {
  constexpr std::uint32_t kInitval = 13;
  const std::uint32_t seed = 0xdeadbeef + static_cast<std::uint32_t>(key.size()) + kInitval;
  Lookup3 s{seed, seed, seed};
  if (key.empty()) return s.c;

  const char* p = key.data();
  std::size_t left = key.size();
  for (; left > 12; left -= 12, p += 12) {
    s.a += little_endian32(p);
    s.b += little_endian32(p + 4);
    s.c += little_endian32(p + 8);
    s.mix();
  }
  // The last 1..12 bytes, zero-padded.
  std::array<char, 12> tail{};
  std::memcpy(tail.data(), p, left);
  s.a += little_endian32(tail.data());
  s.b += little_endian32(tail.data() + 4);
  s.c += little_endian32(tail.data() + 8);
  s.finish();
  return s.c;
}

namespace {

struct NamedFunction {
  std::string_view name;
  HashFunction function;
};

// In the order of twemproxy's HASH_CODEC.
constexpr std::array<NamedFunction, 12> kFunctions{{
    {"one_at_a_time", one_at_a_time},
    {"md5", md5},
    {"crc16", crc16},
    {"crc32", crc32},
    {"crc32a", crc32a},
    {"fnv1_64", fnv1_64},
    {"fnv1a_64", fnv1a_64},
    {"fnv1_32", fnv1_32},
    {"fnv1a_32", fnv1a_32},
    {"hsieh", hsieh},
    {"murmur", murmur},
    {"jenkins", jenkins},
}};

constexpr auto kNames = [] {
  std::array<std::string_view, kFunctions.size()> names;
  for (std::size_t i = 0; i < kFunctions.size(); ++i) names[i] = kFunctions[i].name;
  return names;
}();

}  // namespace

std::optional<HashFunction> hash_function_named(std::string_view name) {
  for (const auto& f : kFunctions) {
    if (f.name == name) return f.function;
  }
  return std::nullopt;
}

std::span<const std::string_view> hash_function_names() {
  return kNames;
}

}  // namespace santral::hashkit
