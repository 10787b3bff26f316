#include "router/runtime/audit_log.h"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "router/runtime/client_state.h"

namespace santral::router {

namespace {

// 2026-12-06T15:28:38.123Z
std::string utc_now() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms.count());
}

}  // namespace

AuditActor client_actor(const ClientState& client) {
  return {"resp", client.user, client.peer};
}

void audit_command(AuditLog* audit, std::string_view action, const ClientState& client,
                   std::span<const std::string_view> args, bool ok, std::string_view outcome) {
  if (audit == nullptr) return;
  audit->record(
      {action, client_actor(client), audit_command_line(args), ok, std::string(outcome), {}});
}

std::string_view reply_first_line(std::string_view resp) {
  if (resp.empty()) return resp;
  resp.remove_prefix(1);
  return resp.substr(0, resp.find("\r\n"));
}

AuditLog::AuditLog(std::shared_ptr<spdlog::logger> logger, std::string router)
    : logger_(std::move(logger)), router_(std::move(router)) {}

AuditLog::~AuditLog() {
  logger_->flush();
}

std::unique_ptr<AuditLog> AuditLog::open(const config::AuditSettings& settings, std::string router,
                                         std::string& error) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  try {
    if (settings.to_stderr())
      sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    else
      sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
          settings.path, settings.max_bytes, settings.max_files);
  } catch (const spdlog::spdlog_ex& e) {
    error = fmt::format("cannot open the audit log {} (audit.path): {}", settings.path, e.what());
    return nullptr;
  }
  // Not registered with spdlog: the router's own log level and pattern never reach it.
  auto logger = std::make_shared<spdlog::logger>("audit", std::move(sink));
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(logger), std::move(router)));
}

void AuditLog::record(const AuditEntry& entry) {
  nlohmann::ordered_json line{
      {"time", utc_now()},        {"router", router_},      {"action", entry.action},
      {"via", entry.who.via},     {"user", entry.who.user}, {"address", entry.who.address},
      {"command", entry.command}, {"ok", entry.ok},         {"outcome", entry.outcome}};
  if (!entry.acl.empty()) line["acl"] = entry.acl;
  // A client's bytes are not always UTF-8: they are replaced rather than refused.
  logger_->info(line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace santral::router
