#include "router/routes/script_cache.h"

#include <sha1.h>

#include <cctype>

namespace santral::router {

std::string ScriptCache::sha1_hex(std::string_view body) {
  SHA1_CTX context;
  SHA1Init(&context);
  SHA1Update(&context, reinterpret_cast<const std::uint8_t*>(body.data()), body.size());
  std::uint8_t digest[SHA1_DIGEST_LENGTH];
  SHA1Final(digest, &context);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * SHA1_DIGEST_LENGTH);
  for (std::uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return hex;
}

std::string ScriptCache::remember(std::string_view body) {
  std::string sha = sha1_hex(body);
  remember(sha, std::string(body));
  return sha;
}

void ScriptCache::remember(std::string sha, std::string body) {
  if (bodies_.contains(sha)) return;
  if (order_.size() >= kMaxScripts) {
    bodies_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(sha);
  bodies_.emplace(std::move(sha), std::move(body));
}

const std::string* ScriptCache::body_of(std::string_view sha) const {
  std::string lower(sha);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = bodies_.find(lower);
  return it == bodies_.end() ? nullptr : &it->second;
}

}  // namespace santral::router
