#include "router/commands/client_commands.h"

#include <optional>

#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/acl/user_directory.h"
#include "router/commands/across_fleet.h"
#include "router/commands/across_workers.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::error_message;
using protocol::parse_integer;
using protocol::RespWriter;

namespace {

void reply_syntax_error(RequestContext& client) {
  client.reply_error(error_message(ClientError::SyntaxError));
}

void reply_bulk(RequestContext& client, std::string_view text) {
  std::string out;
  RespWriter(out).bulk(text);
  client.reply(out);
}

// Which clients a CLIENT KILL or CLIENT LIST names.
struct ClientFilter {
  std::vector<std::uint64_t> ids;
  std::string addr, laddr, user, type;
  std::optional<long long> max_age;
  std::uint64_t skip = 0;  // SKIPME: the caller's id, or 0

  bool matches(RequestContext& client) const {
    const auto& state = client.state();
    if (state.id == skip) return false;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), state.id) == ids.end()) return false;
    if (!addr.empty() && state.peer != addr) return false;
    if (!laddr.empty() && state.local != laddr) return false;
    if (!user.empty() && state.user != user) return false;
    if (type == "pubsub" && !client.held().subscribed()) return false;
    if ((type == "master" || type == "replica" || type == "slave")) return false;
    if (type == "normal" && client.held().subscribed()) return false;
    if (max_age) {
      auto age = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                  state.connected_at);
      if (age.count() < *max_age) return false;
    }
    return true;
  }
};

}  // namespace

bool valid_client_name(std::string_view name) {
  for (char c : name)
    if (c < '!' || c > '~') return false;
  return true;
}

void client_getname(const Routed& r) {
  const auto& name = r.client.state().name;
  std::string out;
  RespWriter writer(out, r.client.state().protocol);
  if (name.empty()) {
    writer.null();
  } else {
    writer.bulk(name);
  }
  r.client.reply(out);
}

void client_setname(const Routed& r) {
  std::string_view name = r.request.args[2];
  if (!valid_client_name(name))
    return r.client.reply_error(error_message(ClientError::InvalidClientName));
  r.client.state().name = std::string(name);
  r.client.reply("+OK\r\n");
}

void client_id(const Routed& r) {
  std::string out;
  RespWriter(out).integer(static_cast<std::int64_t>(r.client.state().id));
  r.client.reply(out);
}

void client_info(const Routed& r) {
  reply_bulk(r.client, r.client.link().describe() + "\n");
}

void client_no_evict(const Routed& r) {
  std::string_view mode = r.request.args[2];
  if (!equals_nocase(mode, "on") && !equals_nocase(mode, "off"))
    return reply_syntax_error(r.client);
  r.client.reply("+OK\r\n");  // eviction of client memory is the shards' business
}

// CLIENT REPLY ON|OFF|SKIP: ON is answered even after OFF; OFF and SKIP are not answered.
void client_reply(const Routed& r) {
  auto& state = r.client.state();
  std::string_view mode = r.request.args[2];
  if (equals_nocase(mode, "on")) {
    state.reply_off = false;
    r.client.set_silent(false);
    r.client.reply("+OK\r\n");
  } else if (equals_nocase(mode, "off")) {
    state.reply_off = true;
    r.client.set_silent(true);
  } else if (equals_nocase(mode, "skip")) {
    state.skip_next = true;
    r.client.set_silent(true);
  } else {
    reply_syntax_error(r.client);
  }
}

namespace {

void lower(std::string& text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// The client types Redis knows (lower case): any other is refused, as by Redis.
bool known_client_type(std::string_view type) {
  return type == "normal" || type == "pubsub" || type == "master" || type == "replica" ||
         type == "slave";
}

// CLIENT LIST's filters from args[from]: [TYPE normal|pubsub|master|replica] [ID id ...];
// `local` (SANTRAL CLIENTS LOCAL LIST) also takes SKIPME yes|no. The error to answer, or "".
std::string parse_list_filter(const Routed& r, std::size_t from, bool local, ClientFilter& filter) {
  const auto& args = r.request.args;
  for (std::size_t i = from; i < args.size(); ++i) {
    if (equals_nocase(args[i], "type") && i + 1 < args.size()) {
      filter.type = std::string(args[++i]);
      lower(filter.type);
      if (!known_client_type(filter.type))
        return error_message(ClientError::UnknownClientType, args[i]);
    } else if (local && equals_nocase(args[i], "skipme") && i + 1 < args.size()) {
      std::string_view value = args[++i];
      if (!equals_nocase(value, "yes") && !equals_nocase(value, "no"))
        return error_message(ClientError::SyntaxError);
      filter.skip = equals_nocase(value, "yes") ? r.client.state().id : 0;
    } else if (equals_nocase(args[i], "id") && i + 1 < args.size()) {
      while (i + 1 < args.size()) {
        auto id = parse_integer(args[++i]);
        if (!id || *id <= 0) return error_message(ClientError::InvalidClientId);
        filter.ids.push_back(static_cast<std::uint64_t>(*id));
      }
    } else {
      return error_message(ClientError::SyntaxError);
    }
  }
  return {};
}

// CLIENT KILL's filters from args[from]: addr:port alone (`old_form`), or [ID id] [ADDR a]
// [LADDR a] [USER u] [TYPE t] [SKIPME yes|no] [MAXAGE s]. The error to answer, or "".
std::string parse_kill_filter(const Routed& r, std::size_t from, ClientFilter& filter,
                              bool& old_form) {
  const auto& args = r.request.args;
  old_form = args.size() == from + 1;
  if (old_form) {
    filter.addr = std::string(args[from]);
    return {};
  }
  filter.skip = r.client.state().id;
  if (args.size() <= from || (args.size() - from) % 2 != 0)
    return error_message(ClientError::SyntaxError);
  for (std::size_t i = from; i + 1 < args.size(); i += 2) {
    std::string_view option = args[i];
    std::string value(args[i + 1]);
    if (equals_nocase(option, "id")) {
      auto id = parse_integer(value);
      if (!id || *id <= 0) return error_message(ClientError::KillClientId);
      filter.ids.push_back(static_cast<std::uint64_t>(*id));
    } else if (equals_nocase(option, "addr")) {
      filter.addr = value;
    } else if (equals_nocase(option, "laddr")) {
      filter.laddr = value;
    } else if (equals_nocase(option, "user")) {
      if (value != "default" && find_user(r.client.worker().config(), value) == nullptr)
        return error_message(ClientError::KillNoSuchUser, value);
      filter.user = value;
    } else if (equals_nocase(option, "type")) {
      lower(value);
      if (!known_client_type(value))
        return error_message(ClientError::UnknownClientType, args[i + 1]);
      filter.type = value;
    } else if (equals_nocase(option, "skipme")) {
      if (equals_nocase(value, "yes")) {
        filter.skip = r.client.state().id;
      } else if (equals_nocase(value, "no")) {
        filter.skip = 0;
      } else {
        return error_message(ClientError::SyntaxError);
      }
    } else if (equals_nocase(option, "maxage")) {
      auto age = parse_integer(value);
      if (!age) return error_message(ClientError::SyntaxError);
      filter.max_age = *age;
    } else {
      return error_message(ClientError::SyntaxError);
    }
  }
  return {};
}

// This worker's clients that `filter` names, one CLIENT LIST line each; in a fleet each line
// ends with `router=<name>`.
// `asker`: the client that sent CLIENT LIST and its line, made while its request ran (as Redis
// shows it: the request still in its query buffer, its reply not queued yet).
std::string list_here(WorkerServices& worker, const ClientFilter& filter, const std::string& router,
                      const std::pair<std::uint64_t, std::string>& asker) {
  std::string lines;
  worker.for_each_client([&](RequestContext& client) {
    if (client.link().closed() || !filter.matches(client)) return;
    lines += client.state().id == asker.first ? asker.second : client.link().describe();
    if (!router.empty()) lines += " router=" + router;
    lines += '\n';
  });
  return lines;
}

// Closes this worker's clients that `filter` names; the caller (`self`) once its reply is out.
long long kill_here(WorkerServices& worker, const ClientFilter& filter, std::uint64_t self) {
  long long killed = 0;
  worker.for_each_client([&](RequestContext& client) {
    if (client.link().closed() || !filter.matches(client)) return;
    ++killed;
    if (client.state().id == self) {
      client.close_after_replies();
    } else {
      client.link().close();
    }
  });
  return killed;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const auto& part : parts) text += part;
  return text;
}

long long total(const std::vector<long long>& counts) {
  long long sum = 0;
  for (auto n : counts) sum += n;
  return sum;
}

std::string kill_reply(long long killed, bool old_form) {
  std::string out;
  if (!old_form) {
    RespWriter(out).integer(killed);
  } else if (killed > 0) {
    RespWriter(out).simple("OK");
  } else {
    RespWriter(out).error(error_message(ClientError::ClientNotFound));
  }
  return out;
}

// What the other routers are asked: their own clients, never the connection that asks.
std::vector<std::string> local_command(std::string_view verb, const ClientFilter& filter) {
  // SKIPME first: CLIENT LIST's ID takes every argument after it.
  std::vector<std::string> command{"SANTRAL",         "CLIENTS", "LOCAL",
                                   std::string(verb), "SKIPME",  "yes"};
  auto add = [&](std::string_view option, const std::string& value) {
    if (value.empty()) return;
    command.emplace_back(option);
    command.push_back(value);
  };
  add("TYPE", filter.type);
  add("ADDR", filter.addr);
  add("LADDR", filter.laddr);
  add("USER", filter.user);
  if (filter.max_age) add("MAXAGE", std::to_string(*filter.max_age));
  if (verb == "KILL") {
    for (auto id : filter.ids) add("ID", std::to_string(id));
  } else if (!filter.ids.empty()) {
    command.emplace_back("ID");
    for (auto id : filter.ids) command.push_back(std::to_string(id));
  }
  return command;
}

}  // namespace

// CLIENT LIST [TYPE normal|pubsub|master|replica] [ID id ...]: every router of the fleet's
// clients, each line naming its router; a router that does not answer is a line of its own,
// `router=<name> error=<why>` (spaces as '_').
void client_list(const Routed& r) {
  auto filter = std::make_shared<ClientFilter>();
  if (auto error = parse_list_filter(r, 2, false, *filter); !error.empty())
    return r.client.reply_error(error);
  std::string router = fleet_router_name(r.client.worker());
  auto asker = std::make_shared<const std::pair<std::uint64_t, std::string>>(
      r.client.state().id, r.client.link().describe());
  across_fleet<std::string>(
      r,
      [filter, router, asker](WorkerServices& worker) {
        return list_here(worker, *filter, router, *asker);
      },
      router.empty() ? std::vector<std::string>{} : local_command("LIST", *filter),
      [](const std::vector<std::string>& here, const std::vector<RouterPart>& routers) {
        std::string text = joined(here);
        for (const auto& part : routers) {
          protocol::ReplyValue value;
          auto error = part_error(part, value, protocol::ReplyValue::Type::BulkString);
          if (error.empty()) {
            text += value.text;
            continue;
          }
          for (auto& c : error)
            if (c == ' ' || c == '\n' || c == '\r') c = '_';
          text += "router=" + part.router + " error=" + error + "\n";
        }
        std::string out;
        RespWriter(out).bulk(text);
        return out;
      });
}

// CLIENT KILL addr:port | CLIENT KILL [ID id] [ADDR a] [LADDR a] [USER u] [TYPE t]
//                                     [SKIPME yes|no] [MAXAGE s]
// on every router of the fleet; when one does not answer, an error says how many were closed
// and which router may still have some.
void client_kill(const Routed& r) {
  auto filter = std::make_shared<ClientFilter>();
  bool old_form = false;
  if (auto error = parse_kill_filter(r, 2, *filter, old_form); !error.empty())
    return r.client.reply_error(error);
  std::uint64_t self = r.client.state().id;
  bool fleet = !fleet_router_name(r.client.worker()).empty();
  across_fleet<long long>(
      r, [filter, self](WorkerServices& worker) { return kill_here(worker, *filter, self); },
      fleet ? local_command("KILL", *filter) : std::vector<std::string>{},
      [old_form](const std::vector<long long>& here, const std::vector<RouterPart>& routers) {
        long long killed = total(here);
        std::string silent;
        for (const auto& part : routers) {
          protocol::ReplyValue value;
          auto error = part_error(part, value, protocol::ReplyValue::Type::Integer);
          if (error.empty()) {
            killed += value.integer;
            continue;
          }
          silent += (silent.empty() ? "" : ", ") + part.router + " (" + error + ")";
        }
        if (silent.empty()) return kill_reply(killed, old_form);
        std::string out;
        RespWriter(out).error(error_message(ClientError::RoutersSilent, "CLIENT KILL",
                                            fmt::format("{} closed", killed), silent));
        return out;
      });
}

// SANTRAL CLIENTS LOCAL [LIST [filters] | KILL filters]: CLIENT LIST and CLIENT KILL as they
// were before the fleet: this router's clients only (the other routers answer these when
// asked through one of them).
void santral_clients(const Routed& r) {
  const auto& args = r.request.args;
  auto syntax_error = [&] { r.client.reply_error(error_message(ClientError::ClientsLocalSyntax)); };
  if (!equals_nocase(args[2], "local")) return syntax_error();
  bool kill = args.size() > 3 && equals_nocase(args[3], "kill");
  if (args.size() > 3 && !kill && !equals_nocase(args[3], "list")) return syntax_error();
  auto filter = std::make_shared<ClientFilter>();
  std::string router = fleet_router_name(r.client.worker());
  if (!kill) {
    if (auto error = parse_list_filter(r, 4, true, *filter); !error.empty())
      return r.client.reply_error(error);
    across_workers<std::string>(
        r,
        [filter, router](WorkerServices& worker) {
          return list_here(worker, *filter, router, {0, {}});  // asked by another router
        },
        [](const std::vector<std::string>& parts) {
          std::string out;
          RespWriter(out).bulk(joined(parts));
          return out;
        });
    return;
  }
  bool old_form = false;
  if (args.size() < 5) return syntax_error();
  if (auto error = parse_kill_filter(r, 4, *filter, old_form); !error.empty())
    return r.client.reply_error(error);
  std::uint64_t self = r.client.state().id;
  across_workers<long long>(
      r, [filter, self](WorkerServices& worker) { return kill_here(worker, *filter, self); },
      [old_form](const std::vector<long long>& counts) {
        return kill_reply(total(counts), old_form);
      });
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]
void client_unblock(const Routed& r) {
  const auto& args = r.request.args;
  auto id = parse_integer(args[2]);
  if (!id) return r.client.reply_error(error_message(ClientError::NotAnInteger));
  bool with_error = false;
  if (args.size() == 4) {
    if (equals_nocase(args[3], "error")) {
      with_error = true;
    } else if (!equals_nocase(args[3], "timeout")) {
      return r.client.reply_error(error_message(ClientError::UnblockReason));
    }
  } else if (args.size() > 4) {
    return reply_syntax_error(r.client);
  }
  auto target = static_cast<std::uint64_t>(*id);
  across_workers<long long>(
      r,
      [target, with_error](WorkerServices& worker) {
        long long unblocked = 0;
        worker.for_each_client([&](RequestContext& client) {
          if (client.state().id == target && client.held().unblock(with_error)) unblocked = 1;
        });
        return unblocked;
      },
      [](const std::vector<long long>& counts) {
        long long total = 0;
        for (auto n : counts) total += n;
        std::string out;
        RespWriter(out).integer(total);
        return out;
      });
}

}  // namespace santral::router
