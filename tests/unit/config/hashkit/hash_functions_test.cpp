#include "config/hashkit/hash_functions.h"

#include <array>
#include <boost/crc.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

using namespace std::string_view_literals;
using santral::hashkit::hash_function_named;
using santral::hashkit::hash_function_names;
namespace hk = santral::hashkit;

TEST_CASE("hash functions are found by the names twemproxy's config uses") {
  constexpr std::array kNames = {"one_at_a_time"sv, "md5"sv,     "crc16"sv,    "crc32"sv,
                                 "crc32a"sv,        "fnv1_64"sv, "fnv1a_64"sv, "fnv1_32"sv,
                                 "fnv1a_32"sv,      "hsieh"sv,   "murmur"sv,   "jenkins"sv};
  auto names = hash_function_names();
  REQUIRE(names.size() == kNames.size());
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    CHECK(names[i] == kNames[i]);
    CHECK(hash_function_named(kNames[i]).has_value());
  }
  CHECK(*hash_function_named("md5") == &hk::md5);
  CHECK(*hash_function_named("fnv1a_64") == &hk::fnv1a_64);
  CHECK(*hash_function_named("jenkins") == &hk::jenkins);

  CHECK_FALSE(hash_function_named("MD5").has_value());  // twemproxy compares case-sensitively
  CHECK_FALSE(hash_function_named("fnv1a").has_value());
  CHECK_FALSE(hash_function_named("random").has_value());  // a distribution, not a hash
  CHECK_FALSE(hash_function_named("").has_value());
}

TEST_CASE("md5 is the first four digest bytes, little-endian (RFC 1321 vectors)") {
  // "" -> d41d8cd9..., "a" -> 0cc175b9..., "abc" -> 90015098...
  CHECK(hk::md5("") == 0xd98c1dd4);
  CHECK(hk::md5("a") == 0xb975c10c);
  CHECK(hk::md5("abc") == 0x98500190);
  CHECK(hk::md5("message digest") == 0x7d696bf9);              // f96b697d...
  CHECK(hk::md5("abcdefghijklmnopqrstuvwxyz") == 0xd7d3fcc3);  // c3fcd3d7...
}

TEST_CASE("crc32a is CRC-32 and crc32 is libmemcached's 15-bit slice of it") {
  CHECK(hk::crc32a("123456789") == 0xcbf43926);  // the CRC-32 check value
  CHECK(hk::crc32a("") == 0);
  CHECK(hk::crc32("123456789") == 0x4bf4);
  for (auto key : {"a"sv, "foo:bar"sv, "user:1000"sv, "\xff\x80"sv}) {
    CHECK(hk::crc32(key) == ((hk::crc32a(key) >> 16) & 0x7fff));
  }
}

TEST_CASE("crc16 is CRC-16/XMODEM in an unmasked 32-bit register, as in twemproxy 0.5.0") {
  CHECK((hk::crc16("123456789") & 0xffff) == 0x31c3);  // the CRC-16/XMODEM check value
  CHECK(hk::crc16("123456789") == 0x869031c3);
  CHECK(hk::crc16("a") == 0x7c87);  // one byte: nothing shifted out yet
  for (auto key : {"a"sv, "hello"sv, "foo:bar"sv, "\xe9t\xe9"sv, "The quick brown fox"sv}) {
    boost::crc_xmodem_t xmodem;
    xmodem.process_bytes(key.data(), key.size());
    CHECK((hk::crc16(key) & 0xffff) == xmodem.checksum());
  }
}

TEST_CASE("fnv functions match the published FNV vectors for ASCII keys") {
  CHECK(hk::fnv1_32("") == 0x811c9dc5);
  CHECK(hk::fnv1_32("a") == 0x050c5d7e);
  CHECK(hk::fnv1_32("foobar") == 0x31f0b262);
  CHECK(hk::fnv1a_32("") == 0x811c9dc5);
  CHECK(hk::fnv1a_32("a") == 0xe40c292c);
  CHECK(hk::fnv1a_32("foobar") == 0xbf9cf968);
  // The 64-bit variants return the low half: FNV-1 64 "foobar" = 0x340d8765a4dda9c2,
  // FNV-1a 64 "foobar" = 0x85944171f73967e8.
  CHECK(hk::fnv1_64("") == 0x84222325);
  CHECK(hk::fnv1_64("a") == 0x8601b7be);
  CHECK(hk::fnv1_64("foobar") == 0xa4dda9c2);
  CHECK(hk::fnv1a_64("a") == 0x8601ec8c);
  CHECK(hk::fnv1a_64("foobar") == 0xf73967e8);
}

TEST_CASE("one_at_a_time matches Jenkins' published vectors") {
  CHECK(hk::one_at_a_time("a") == 0xca2e9442);
  CHECK(hk::one_at_a_time("The quick brown fox jumps over the lazy dog") == 0x519e91f5);
}

TEST_CASE("jenkins does not depend on where the key sits in memory") {
  // twemproxy reads 32-, 16- or 8-bit words depending on the key's alignment; all must agree.
  alignas(16) std::array<char, 64> buffer{};
  const std::string key = "an unaligned key of 27 byte";
  for (std::size_t offset = 0; offset < 4; ++offset) {
    std::copy(key.begin(), key.end(), buffer.begin() + static_cast<long>(offset));
    // nutcracker 0.5.0 returns this at offsets 0, 1 and 2.
    CHECK(hk::jenkins(std::string_view(buffer.data() + offset, key.size())) == 0x6aa7e788);
  }
  CHECK(hk::jenkins("") == 0xdeadbeef + 13);  // lookup3's seed with initval 13, unmixed
}

// What nutcracker 0.5.0 (Debian 12 amd64 package) itself returns: its hash_* functions are
// exported from the executable and were called on these bytes. The keys with bytes >= 0x80
// pin down twemproxy's signed-char reads (one_at_a_time, fnv*, hsieh's odd tail byte).
TEST_CASE("every function returns what nutcracker 0.5.0 returns") {
  struct Vector {
    std::string_view key;
    std::array<std::uint32_t, 12> expected;  // in hash_function_names() order
  };
  const std::array<Vector, 12> vectors{{
      {"a"sv,
       {0xca2e9442, 0xb975c10c, 0x00007c87, 0x000068b7, 0xe8b7be43, 0x8601b7be, 0x8601ec8c,
        0x050c5d7e, 0xe40c292c, 0x93642e87, 0x4b41757c, 0xe0a38690}},
      {"ab"sv,
       {0x45e61e58, 0x43f47e18, 0x007c74ff, 0x00001e83, 0x9e83486d, 0xb4eb37b8, 0xb545986a,
        0x70772d38, 0x4d2505ca, 0x5b8c0ec3, 0xe3b54dfb, 0xc1b5695b}},
      {"abc"sv,
       {0xed131f5b, 0x98500190, 0x7c749dd6, 0x00003524, 0x352441c2, 0x6bafadcb, 0x0541574b,
        0x439c2f4b, 0x1a47e90b, 0xe5186b3a, 0x7b0cc428, 0x8f415600}},
      {"abcd"sv,
       {0xcd8b6206, 0x4c71fce2, 0x749da836, 0x00006d82, 0xed82cd11, 0xfb844f95, 0xee0724dd,
        0xb9de7375, 0xce3479bd, 0x3ab452d8, 0xef6a86af, 0xd512151a}},
      {"123456789"sv,
       {0xc66b58c5, 0x94e7f925, 0x869031c3, 0x00004bf4, 0xcbf43926, 0x2bf916d6, 0x23c6cdfc,
        0x24148816, 0xbb86b11c, 0xe4fc1670, 0xb7760690, 0x19777af6}},
      {"foo:bar"sv,
       {0x586804a2, 0xc1e8994e, 0x48302386, 0x000001e2, 0x81e2b6cf, 0x12a9b5a2, 0xb3394ac8,
        0xb0715b22, 0xb7264ca8, 0xd615927b, 0x94f12def, 0x9a99baf8}},
      {"The quick brown fox jumps over the lazy dog"sv,
       {0x519e91f5, 0x9d7d109e, 0x22a3f0c8, 0x0000414f, 0x414fa339, 0x7de37ace, 0xe7e47110,
        0xe9c86c6e, 0x048fff90, 0x1c19ee97, 0x30c79125, 0x12b8163c}},
      {"\x80"sv,
       {0xc31d4e27, 0x7edd398d, 0x00009188, 0x00003fba, 0x3fba6cad, 0x79fe485f, 0x79fdec5f,
        0xfaf3a29f, 0x04f3b29f, 0xd6f4cb32, 0x90556245, 0xb16fde48}},
      {"\xff"sv,
       {0xae65a494, 0xd44f5900, 0x00001ef0, 0x00007f00, 0xff000000, 0x79fe4820, 0x79fe466e,
        0xfaf3a2e0, 0xf9f3a14e, 0x02a6dba8, 0xdb530a9c, 0xe1964da8}},
      {"\xe9t\xe9"sv,
       {0x8c711b75, 0x306eb070, 0x6c94963a, 0x00004bf7, 0xcbf7d413, 0x6bd2a1ab, 0xb5281ffb,
        0x387cffeb, 0xfb67177b, 0x3a499135, 0xf7762cff, 0x1fc3862b}},
      {"caf\xc3\xa9"sv,
       {0xd99c709e, 0xe47f1107, 0xf6269667, 0x000018ad, 0x98ad42b5, 0x8a06fef1, 0xcef6bb89,
        0xd682f171, 0x7572c049, 0xde3f8855, 0xda11981f, 0xcb6225ad}},
      {"\xff\xfe\xfd"sv,
       {0x475549b8, 0xc24e6789, 0x1e0dc11f, 0x000008ea, 0x08eaaf6d, 0x93edf087, 0x8f0e92d7,
        0x914c9107, 0xbf6d4517, 0xd989515e, 0xc2e4b7ff, 0x222bd93e}},
  }};
  auto names = hash_function_names();
  for (const auto& v : vectors) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      INFO(names[i] << " of \"" << v.key << "\"");
      CHECK((*hash_function_named(names[i]))(v.key) == v.expected[i]);
    }
  }
}

TEST_CASE("empty keys hash to the functions' initial values") {
  // twemproxy itself never hashes an empty key (it uses hash 0), but the functions are total.
  CHECK(hk::one_at_a_time("") == 0);
  CHECK(hk::crc16("") == 0);
  CHECK(hk::crc32("") == 0);
  CHECK(hk::hsieh("") == 0);
  CHECK(hk::murmur("") == 0);
  CHECK(hk::fnv1a_64("") == 0x84222325);
}
