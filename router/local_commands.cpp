#include <array>
#include <charconv>
#include <strings.h>

#include "protocol/command_table.h"
#include "protocol/command_table_data.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/client_session.h"
#include "router/routing.h"
#include "router/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;
using protocol::LocalHandler;
using protocol::RespWriter;

namespace {

using Handler = void (*)(const Routed&);

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool to_int(std::string_view text, long long& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

template <typename Compose>
void answer(const Routed& r, Compose&& compose) {
  std::string out;
  RespWriter writer(out);
  compose(writer);
  r.session.reply(out);
}

void ok(const Routed& r) { r.session.reply("+OK\r\n"); }

void ping(const Routed& r) {
  if (r.request.args.size() == 1) return r.session.reply("+PONG\r\n");
  answer(r, [&](RespWriter& w) { w.bulk(r.request.args[1]); });
}

void echo(const Routed& r) {
  answer(r, [&](RespWriter& w) { w.bulk(r.request.args[1]); });
}

void quit(const Routed& r) {
  r.session.reply("+OK\r\n");
  r.session.close_after_replies();
}

// Santral serves one database of every shard (backend.database); a client sees it as db 0.
void select(const Routed& r) {
  long long db = 0;
  if (!to_int(r.request.args[1], db))
    return r.session.reply_error("ERR value is not an integer or out of range");
  if (db < 0 || db > 65535) return r.session.reply_error(error_message(ClientError::SelectInvalid));
  if (db != 0)
    return r.session.reply_error(
        error_message(ClientError::SelectUnsupported, db, r.session.worker().config().backend.database));
  ok(r);
}

bool check_password(const Routed& r, std::string_view user, std::string_view password) {
  const auto& config = r.session.worker().config();
  if (config.password.empty()) {
    r.session.reply_error(error_message(ClientError::AuthNotConfigured));
    return false;
  }
  if (user != "default" || password != config.password) {
    r.session.reply_error(error_message(ClientError::AuthFailed));
    return false;
  }
  r.session.state().authenticated = true;
  return true;
}

void auth(const Routed& r) {
  const auto& args = r.request.args;
  if (args.size() > 3) return r.session.reply_error("ERR syntax error");
  std::string_view user = args.size() == 3 ? args[1] : "default";
  if (check_password(r, user, args.back())) ok(r);
}

bool valid_client_name(std::string_view name) {
  for (char c : name)
    if (c < '!' || c > '~') return false;
  return true;
}

void hello(const Routed& r) {
  const auto& args = r.request.args;
  auto& state = r.session.state();
  long long version = state.protocol;
  std::size_t i = 1;
  if (args.size() > 1) {
    if (!to_int(args[1], version))
      return r.session.reply_error("ERR Protocol version is not an integer or out of range");
    i = 2;
    // RESP3 replies need Santral to convert what shards send; until then it is refused the way
    // Redis refuses an unknown version, and clients fall back to RESP2.
    if (version != 2) return r.session.reply_error("NOPROTO sorry, this protocol version is not supported");
  }
  std::string_view new_name;
  bool rename = false;
  for (; i < args.size(); ++i) {
    if (equals_nocase(args[i], "AUTH") && i + 2 < args.size()) {
      if (!check_password(r, args[i + 1], args[i + 2])) return;
      i += 2;
    } else if (equals_nocase(args[i], "SETNAME") && i + 1 < args.size()) {
      new_name = args[++i];
      rename = true;
      if (!valid_client_name(new_name))
        return r.session.reply_error("ERR Client names cannot contain spaces, newlines or special characters.");
    } else {
      return r.session.reply_error("ERR Syntax error in HELLO option '" + std::string(args[i]) + "'");
    }
  }
  if (!state.authenticated) return r.session.reply_error(error_message(ClientError::NoAuth));
  if (rename) state.name = std::string(new_name);
  state.protocol = static_cast<int>(version);
  answer(r, [&](RespWriter& w) {
    w.array_header(14);
    w.bulk("server");
    w.bulk("redis");
    w.bulk("version");
    w.bulk(protocol::generated_from_version());
    w.bulk("proto");
    w.integer(state.protocol);
    w.bulk("id");
    w.integer(static_cast<std::int64_t>(state.id));
    w.bulk("mode");
    w.bulk("standalone");
    w.bulk("role");
    w.bulk("master");
    w.bulk("modules");
    w.array_header(0);
  });
}

void reset(const Routed& r) {
  auto& state = r.session.state();
  state.name.clear();
  state.protocol = 2;
  state.authenticated = r.session.worker().config().password.empty();
  r.session.reply("+RESET\r\n");
}

void help(const Routed& r) {
  const auto* container = protocol::find_command(r.request.args[0]);
  answer(r, [&](RespWriter& w) {
    std::vector<std::string> lines;
    lines.push_back(std::string(container->name) + " <subcommand> [<arg> ...]. Through Santral:");
    for (const auto& sub : container->subcommands) {
      if (sub.routing == protocol::Routing::Refused) continue;
      lines.push_back("  " + std::string(sub.name.substr(container->name.size() + 1)));
    }
    w.array_header(lines.size());
    for (const auto& line : lines) w.simple(line);
  });
}

void client_getname(const Routed& r) {
  const auto& name = r.session.state().name;
  if (name.empty()) return r.session.reply("$-1\r\n");
  answer(r, [&](RespWriter& w) { w.bulk(name); });
}

void client_setname(const Routed& r) {
  std::string_view name = r.request.args[2];
  if (!valid_client_name(name))
    return r.session.reply_error("ERR Client names cannot contain spaces, newlines or special characters.");
  r.session.state().name = std::string(name);
  ok(r);
}

void client_id(const Routed& r) {
  answer(r, [&](RespWriter& w) { w.integer(static_cast<std::int64_t>(r.session.state().id)); });
}

void command_count(const Routed& r) {
  answer(r, [&](RespWriter& w) { w.integer(static_cast<std::int64_t>(protocol::all_commands().size())); });
}

constexpr std::size_t kHandlers = static_cast<std::size_t>(LocalHandler::AclWhoami) + 1;

constexpr auto kTable = [] {
  std::array<Handler, kHandlers> table{};
  table[static_cast<std::size_t>(LocalHandler::Ok)] = ok;
  table[static_cast<std::size_t>(LocalHandler::Ping)] = ping;
  table[static_cast<std::size_t>(LocalHandler::Echo)] = echo;
  table[static_cast<std::size_t>(LocalHandler::Quit)] = quit;
  table[static_cast<std::size_t>(LocalHandler::Hello)] = hello;
  table[static_cast<std::size_t>(LocalHandler::Auth)] = auth;
  table[static_cast<std::size_t>(LocalHandler::Select)] = select;
  table[static_cast<std::size_t>(LocalHandler::Reset)] = reset;
  table[static_cast<std::size_t>(LocalHandler::Help)] = help;
  table[static_cast<std::size_t>(LocalHandler::ClientGetname)] = client_getname;
  table[static_cast<std::size_t>(LocalHandler::ClientSetname)] = client_setname;
  table[static_cast<std::size_t>(LocalHandler::ClientId)] = client_id;
  table[static_cast<std::size_t>(LocalHandler::CommandCount)] = command_count;
  return table;
}();

}  // namespace

void run_local(const Routed& routed) {
  Handler handler = kTable[static_cast<std::size_t>(routed.spec.local)];
  if (handler != nullptr) return handler(routed);
  std::string name(routed.spec.name);
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  routed.session.reply_error(error_message(ClientError::NotYetSupported, name, "local"));
}

}  // namespace santral::router
