#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace santral::config {

// `audit:` where the audit log goes (router/runtime/audit_log.h): every action of an operator
// (admin commands, reloads, map pushes, moves, salting, ACL changes and denials) as one JSON
// line. Off while `path` is empty.
struct AuditSettings {
  static constexpr std::string_view kStderr = "stderr";

  std::string path;                               // a file, or "stderr"; empty: no audit log
  std::uint64_t max_bytes = 64ull * 1024 * 1024;  // a file is rotated past this size
  std::uint32_t max_files = 5;                    // rotated files kept beside it (path.1 ...)
  int line = 0;                                   // where `audit:` is written, for errors

  bool enabled() const { return !path.empty(); }
  bool to_stderr() const { return path == kStderr; }
  bool operator==(const AuditSettings& other) const {
    return path == other.path && max_bytes == other.max_bytes && max_files == other.max_files;
  }
};

}  // namespace santral::config
