#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace santral::router {

// Lua script bodies Santral has seen (EVAL, SCRIPT LOAD), by SHA1, so that an EVALSHA that
// meets a shard without the script (NOSCRIPT: the shard restarted, or was added later) can be
// retried with the body. One per worker; workers tell each other about new scripts.
class ScriptCache {
 public:
  static constexpr std::size_t kMaxScripts = 10000;

  // Remembers `body`; returns its SHA1 (40 lower-case hex digits).
  std::string remember(std::string_view body);
  void remember(std::string sha, std::string body);
  // The body whose SHA1 is `sha` (any case), or nullptr.
  const std::string* body_of(std::string_view sha) const;
  bool knows(std::string_view sha) const { return body_of(sha) != nullptr; }
  std::size_t size() const { return bodies_.size(); }
  void clear() {
    bodies_.clear();
    order_.clear();
  }

  static std::string sha1_hex(std::string_view body);

 private:
  std::unordered_map<std::string, std::string> bodies_;
  std::deque<std::string> order_;  // oldest first, for eviction
};

}  // namespace santral::router
