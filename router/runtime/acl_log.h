#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace santral::router {

// What an ACL LOG entry records, in Redis 7.0's words.
enum class AclLogReason : std::uint8_t { Auth, Command, Key, Channel };
enum class AclLogContext : std::uint8_t { Toplevel, Multi, Lua };

struct AclLogEntry {
  std::uint64_t count = 1;
  AclLogReason reason = AclLogReason::Auth;
  AclLogContext context = AclLogContext::Toplevel;
  std::string object;       // the command ("config|get"), key or channel; "auth" for AUTH
  std::string username;     // the user refused (for AUTH: the one tried)
  std::string client_info;  // the CLIENT LIST line of the client
  std::chrono::steady_clock::time_point created;
};

std::string_view reason_name(AclLogReason reason);
std::string_view context_name(AclLogContext context);

// ACL LOG: the latest denials of every worker of the process, newest first, at most 128
// (Redis's acllog-max-len). A denial like a recent one (same reason, context, object and
// user, within 60 s, among the last 10) counts on that entry, as in Redis. Written only when
// something is refused, so a mutex is cheap enough.
class AclLog {
 public:
  static constexpr std::size_t kMaxEntries = 128;

  void add(AclLogEntry entry);
  std::vector<AclLogEntry> latest(std::size_t count) const;
  void reset();

 private:
  mutable std::mutex lock_;
  std::deque<AclLogEntry> entries_;  // newest first
};

}  // namespace santral::router
