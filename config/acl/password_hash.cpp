#include "config/acl/password_hash.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace santral::config {

PasswordHash hash_password(std::string_view password) {
  PasswordHash hash{};
  SHA256(reinterpret_cast<const unsigned char*>(password.data()), password.size(), hash.data());
  return hash;
}

std::optional<PasswordHash> parse_password_hash(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  PasswordHash hash{};
  for (std::size_t i = 0; i < hash.size(); ++i) {
    int high = digit(hex[2 * i]);
    int low = digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    hash[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return hash;
}

std::string password_hash_hex(const PasswordHash& hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned char byte : hash) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 15]);
  }
  return hex;
}

bool password_matches(const Permissions& user, std::string_view password) {
  if (user.nopass) return true;
  PasswordHash given = hash_password(password);
  bool matched = false;
  for (const auto& stored : user.passwords)
    matched = (CRYPTO_memcmp(stored.data(), given.data(), given.size()) == 0) || matched;
  return matched;
}

}  // namespace santral::config
