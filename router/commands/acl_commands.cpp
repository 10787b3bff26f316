#include "router/commands/acl_commands.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "config/acl/acl_describe.h"
#include "config/acl/acl_rules.h"
#include "config/acl/password_hash.h"
#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/acl/access_check.h"
#include "router/acl/user_directory.h"
#include "router/commands/local_reply.h"
#include "router/runtime/audit_log.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::CommandSpec;
using protocol::error_message;
using protocol::RespWriter;

namespace {

// The config's users by name, "default" included, as ACL LIST and ACL USERS show them (Redis
// keeps its users sorted by name). The default user not in `users:` may run everything.
std::vector<std::pair<std::string, config::Permissions>> every_user(const config::Config& config) {
  std::vector<std::pair<std::string, config::Permissions>> users;
  if (find_user(config, "default") == nullptr) {
    // Without `password:` it is nopass while there are no users, and cannot log in after.
    config::Permissions user = config::unrestricted_acl_user();
    if (!config.password.empty()) {
      config::apply_acl_rule(user, ">" + config.password);
    } else if (config.users.empty()) {
      user.nopass = true;
    } else {
      user.enabled = false;
    }
    users.emplace_back("default", std::move(user));
  }
  for (const auto& user : config.users) users.emplace_back(user.name, *user.permissions);
  std::sort(users.begin(), users.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return users;
}

const CommandSpec* dryrun_command(std::span<const std::string_view> args) {
  const CommandSpec* spec = protocol::find_command(args[0]);
  if (spec == nullptr || spec->subcommands.empty() || args.size() < 2) return spec;
  return protocol::find_subcommand(*spec, args[1]);
}

AclLogReason reason_of(AccessDenial denial) {
  switch (denial) {
    case AccessDenial::Key:
      return AclLogReason::Key;
    case AccessDenial::Channel:
      return AclLogReason::Channel;
    default:
      return AclLogReason::Command;
  }
}

void write_entry(RespWriter& w, const AclLogEntry& entry,
                 std::chrono::steady_clock::time_point now) {
  auto age = fmt::format("{:.17g}", std::chrono::duration<double>(now - entry.created).count());
  w.fields({{"count", static_cast<std::int64_t>(entry.count)},
            {"reason", reason_name(entry.reason)},
            {"context", context_name(entry.context)},
            {"object", entry.object},
            {"username", entry.username},
            {"age-seconds", age},
            {"client-info", entry.client_info}});
}

}  // namespace

void acl_list(const Routed& r) {
  auto users = every_user(r.client.worker().config());
  answer(r, [&](RespWriter& w) {
    w.array_header(users.size());
    for (const auto& [name, user] : users) w.bulk(config::describe_user(name, user));
  });
}

void acl_users(const Routed& r) {
  auto users = every_user(r.client.worker().config());
  answer(r, [&](RespWriter& w) {
    w.array_header(users.size());
    for (const auto& user : users) w.bulk(user.first);
  });
}

void acl_getuser(const Routed& r) {
  auto users = every_user(r.client.worker().config());
  std::string_view name = r.request.args[2];
  auto it =
      std::find_if(users.begin(), users.end(), [&](const auto& u) { return u.first == name; });
  if (it == users.end()) return answer(r, [](RespWriter& w) { w.null(); });
  const config::Permissions& user = it->second;
  answer(r, [&](RespWriter& w) {
    w.map_header(6);
    w.bulk("flags");
    w.array_header(user.nopass ? 2 : 1);
    w.bulk(user.enabled ? "on" : "off");
    if (user.nopass) w.bulk("nopass");
    w.bulk("passwords");
    w.array_header(user.passwords.size());
    for (const auto& hash : user.passwords) w.bulk(config::password_hash_hex(hash));
    w.bulk("commands");
    w.bulk(config::describe_commands(user));
    w.bulk("keys");
    w.bulk(config::describe_keys(user));
    w.bulk("channels");
    w.bulk(config::describe_channels(user));
    w.bulk("selectors");
    w.array_header(0);
  });
}

void acl_cat(const Routed& r) {
  const auto& args = r.request.args;
  if (args.size() > 3) return r.client.reply_error(error_message(ClientError::SyntaxError));
  if (args.size() == 2) {
    return answer(r, [](RespWriter& w) {
      w.array_header(protocol::kAclCategories);
      for (auto category : protocol::all_categories()) w.bulk(protocol::category_name(category));
    });
  }
  auto category = protocol::find_category(args[2]);
  if (!category)
    return r.client.reply_error(error_message(ClientError::AclUnknownCategory, args[2]));
  std::vector<std::string_view> names;
  for (const CommandSpec& spec : protocol::all_commands()) {
    if (spec.in(*category)) names.push_back(spec.name);
    for (const CommandSpec& sub : spec.subcommands)
      if (sub.in(*category)) names.push_back(sub.name);
  }
  answer(r, [&](RespWriter& w) {
    w.array_header(names.size());
    for (auto name : names) w.bulk(name);
  });
}

void acl_dryrun(const Routed& r) {
  const auto& args = r.request.args;
  auto users = every_user(r.client.worker().config());
  auto it =
      std::find_if(users.begin(), users.end(), [&](const auto& u) { return u.first == args[2]; });
  if (it == users.end())
    return r.client.reply_error(error_message(ClientError::AclUserNotFound, args[2]));
  auto command = args.subspan(3);
  const CommandSpec* spec = dryrun_command(command);
  if (spec == nullptr)
    return r.client.reply_error(error_message(ClientError::AclCommandNotFound, command[0]));
  if (!spec->arity_ok(command.size()))
    return r.client.reply_error(error_message(ClientError::WrongArity, spec->name));
  AccessVerdict verdict = check_access(it->second, *spec, command);
  std::string text;
  switch (verdict.denial) {
    case AccessDenial::None:
      return r.client.reply("+OK\r\n");
    case AccessDenial::Command:
      text = error_message(ClientError::DryrunCommand, spec->name);
      break;
    case AccessDenial::Key:
      text = error_message(ClientError::DryrunKey, command[verdict.position]);
      break;
    case AccessDenial::Channel:
      text = error_message(ClientError::DryrunChannel, command[verdict.position]);
      break;
  }
  answer(r, [&](RespWriter& w) { w.bulk(text); });
}

void acl_log(const Routed& r) {
  const auto& args = r.request.args;
  auto& log = r.client.worker().shared().acl_log;
  if (args.size() > 3) return r.client.reply_error(error_message(ClientError::SyntaxError));
  std::size_t count = 10;
  if (args.size() == 3) {
    if (protocol::equals_nocase(args[2], "RESET")) {
      log.reset();
      audit_command(r.client.worker().shared().audit, "acl.log_reset", r.client.state(), args, true,
                    "OK");
      return r.client.reply("+OK\r\n");
    }
    auto parsed = protocol::parse_integer(args[2]);
    if (!parsed || *parsed < 0)
      return r.client.reply_error(error_message(ClientError::AclLogCount));
    count = static_cast<std::size_t>(*parsed);
  }
  auto entries = log.latest(count);
  auto now = std::chrono::steady_clock::now();
  answer(r, [&](RespWriter& w) {
    w.array_header(entries.size());
    for (const auto& entry : entries) write_entry(w, entry, now);
  });
}

bool denied_by_acl(const Plan& plan) {
  return plan.kind == RouteKind::Answered && plan.has_error() &&
         (plan.error_code == ClientError::NoPermCommand ||
          plan.error_code == ClientError::NoPermKey ||
          plan.error_code == ClientError::NoPermChannel);
}

void log_denial(RequestContext& client, const protocol::Request& request, const Plan& plan) {
  const auto& state = client.state();
  if (state.permissions == nullptr || plan.spec == nullptr) return;
  AccessVerdict verdict = check_access(*state.permissions, *plan.spec, request.args);
  AclLogEntry entry;
  entry.reason = reason_of(verdict.denial);
  entry.context = client.held().in_transaction() ? AclLogContext::Multi : AclLogContext::Toplevel;
  entry.object = verdict.denial == AccessDenial::Command
                     ? std::string(plan.spec->name)
                     : std::string(request.args[verdict.position]);
  entry.username = state.user;
  entry.client_info = client.link().describe();
  entry.created = std::chrono::steady_clock::now();
  client.worker().shared().acl_log.add(std::move(entry));
  // The command's name only: its arguments may be values the user may not write.
  if (auto* audit = client.worker().shared().audit)
    audit->record(
        {"acl.denied", client_actor(state), std::string(plan.spec->name), false, plan.error, {}});
}

void log_auth_failure(RequestContext& client, std::string_view user) {
  AclLogEntry entry;
  entry.reason = AclLogReason::Auth;
  entry.context = client.held().in_transaction() ? AclLogContext::Multi : AclLogContext::Toplevel;
  entry.object = "auth";
  entry.username = std::string(user);
  entry.client_info = client.link().describe();
  entry.created = std::chrono::steady_clock::now();
  client.worker().shared().acl_log.add(std::move(entry));
  // The user tried, never the password.
  if (auto* audit = client.worker().shared().audit)
    audit->record({"acl.auth_failed",
                   client_actor(client.state()),
                   fmt::format("AUTH {}", user),
                   false,
                   error_message(ClientError::AuthFailed),
                   {}});
}

}  // namespace santral::router
