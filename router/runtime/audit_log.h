#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "config/audit_config.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace santral::router {

// Who asked for an action: a client of the RESP listener, a request to the admin API, or the
// process itself (a signal, the file watch).
struct AuditActor {
  std::string via;      // resp, http, signal, file
  std::string user;     // the client's ACL user (resp); empty otherwise
  std::string address;  // the client's or the HTTP peer's ip:port; empty for signal and file
};

struct ClientState;
// A client of the RESP listener, from its state.
AuditActor client_actor(const ClientState& client);

// What the audit log records, one line per action (its names are the `action` field):
//
//   config.reload   SANTRAL RELOAD, POST /reload, SIGHUP, the file changed; with `acl` when
//                   the users changed
//   map.push        SANTRAL MAP PUSH
//   move.approve    SANTRAL RESHARD APPROVE, POST /reshard/approve
//   move.abort      SANTRAL RESHARD ABORT, POST /reshard/abort
//   salt, unsalt    SANTRAL SALT, SANTRAL UNSALT
//   failover.accept SANTRAL FAILOVER ACCEPT
//   acl.log_reset   ACL LOG RESET
//   acl.denied      a command, key or channel refused by the user's ACL rules
//   acl.auth_failed AUTH or HELLO AUTH with a wrong user or password
struct AuditEntry {
  std::string_view action;
  AuditActor who;
  std::string command;  // what was asked: the command line, "POST /reload", "SIGHUP"
  bool ok = true;
  std::string outcome;  // the reply or the change summary; the error when refused
  std::string acl;      // config.reload: how the users changed ("" when they did not)
};

// The audit log (`audit:`): JSON lines, to a file rotated by size or to stderr, each written
// and flushed as the action ends:
//
//   {"time":"2026-12-06T15:28:38.123Z","router":"127.0.0.1:6380-4f2a1c","action":"salt",
//    "via":"resp","user":"ops","address":"127.0.0.1:52144","command":"SANTRAL SALT hits 8",
//    "ok":true,"outcome":"OK"}
//
// Safe from any thread: workers record denials, the server's thread reloads.
class AuditLog {
 public:
  // Opens where `settings` says; nullptr and `error` when it cannot (the router then does not
  // start: an audit log that was asked for is never silently left out).
  static std::unique_ptr<AuditLog> open(const config::AuditSettings& settings, std::string router,
                                        std::string& error);
  ~AuditLog();

  void record(const AuditEntry& entry);

 private:
  AuditLog(std::shared_ptr<spdlog::logger> logger, std::string router);

  std::shared_ptr<spdlog::logger> logger_;
  std::string router_;
};

// A client's command and its outcome (the reply, or the error it was refused with) as one
// line of `audit`; nothing when `audit` is nullptr (no audit log).
void audit_command(AuditLog* audit, std::string_view action, const ClientState& client,
                   std::span<const std::string_view> args, bool ok, std::string_view outcome);

// A RESP reply's first line without its type byte ("+OK\r\n" -> "OK"), for an outcome.
std::string_view reply_first_line(std::string_view resp);

// The command line of `args`, for AuditEntry::command: arguments joined by spaces, each cut
// to 200 bytes (a MAP PUSH carries a whole config file).
template <typename Args>
std::string audit_command_line(const Args& args) {
  constexpr std::size_t kMostPerArgument = 200;
  std::string line;
  for (const auto& arg : args) {
    std::string_view text(arg);
    if (!line.empty()) line += ' ';
    if (text.size() > kMostPerArgument)
      line.append(text.substr(0, kMostPerArgument)).append("...");
    else
      line.append(text);
  }
  return line;
}

}  // namespace santral::router
