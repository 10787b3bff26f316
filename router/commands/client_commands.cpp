#include "router/commands/client_commands.h"

#include <optional>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/acl/user_directory.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::error_message;
using protocol::parse_integer;
using protocol::RespWriter;

namespace {

void reply_syntax_error(RequestContext& session) {
  session.reply_error(error_message(ClientError::SyntaxError));
}

void reply_bulk(RequestContext& session, std::string_view text) {
  std::string out;
  RespWriter(out).bulk(text);
  session.reply(out);
}

// Which clients a CLIENT KILL or CLIENT LIST names.
struct ClientFilter {
  std::vector<std::uint64_t> ids;
  std::string addr, laddr, user, type;
  std::optional<long long> max_age;
  std::uint64_t skip = 0;  // SKIPME: the caller's id, or 0

  bool matches(RequestContext& session) const {
    const auto& state = session.state();
    if (state.id == skip) return false;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), state.id) == ids.end()) return false;
    if (!addr.empty() && state.peer != addr) return false;
    if (!laddr.empty() && state.local != laddr) return false;
    if (!user.empty() && state.user != user) return false;
    if (type == "pubsub" && !session.subscribed()) return false;
    if ((type == "master" || type == "replica" || type == "slave")) return false;
    if (type == "normal" && session.subscribed()) return false;
    if (max_age) {
      auto age = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                  state.connected_at);
      if (age.count() < *max_age) return false;
    }
    return true;
  }
};

// Answers the current request later, on this worker, once `collect` has run on every worker.
// Only `collect`'s plain data goes to the other workers; the session stays here (fan_out.h).
template <typename T>
void across_workers(const Routed& routed, std::function<T(WorkerServices&)> collect,
                    std::function<std::string(std::vector<T>)> answer) {
  auto& session = routed.session;
  auto slot = session.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&session);
  auto& worker = session.worker();
  fan_out<T, WorkerServices>(worker.io(), worker.peers(), std::move(collect),
                             [keep, slot, answer = std::move(answer)](std::vector<T> results) {
                               keep->deliver(slot, 0, answer(std::move(results)));
                             });
}

}  // namespace

bool valid_client_name(std::string_view name) {
  for (char c : name)
    if (c < '!' || c > '~') return false;
  return true;
}

void client_getname(const Routed& r) {
  const auto& name = r.session.state().name;
  std::string out;
  RespWriter writer(out, r.session.state().protocol);
  if (name.empty()) {
    writer.null();
  } else {
    writer.bulk(name);
  }
  r.session.reply(out);
}

void client_setname(const Routed& r) {
  std::string_view name = r.request.args[2];
  if (!valid_client_name(name))
    return r.session.reply_error(error_message(ClientError::InvalidClientName));
  r.session.state().name = std::string(name);
  r.session.reply("+OK\r\n");
}

void client_id(const Routed& r) {
  std::string out;
  RespWriter(out).integer(static_cast<std::int64_t>(r.session.state().id));
  r.session.reply(out);
}

void client_info(const Routed& r) {
  reply_bulk(r.session, r.session.describe() + "\n");
}

void client_no_evict(const Routed& r) {
  std::string_view mode = r.request.args[2];
  if (!equals_nocase(mode, "on") && !equals_nocase(mode, "off"))
    return reply_syntax_error(r.session);
  r.session.reply("+OK\r\n");  // eviction of client memory is the shards' business
}

// CLIENT REPLY ON|OFF|SKIP: ON is answered even after OFF; OFF and SKIP are not answered.
void client_reply(const Routed& r) {
  auto& state = r.session.state();
  std::string_view mode = r.request.args[2];
  if (equals_nocase(mode, "on")) {
    state.reply_off = false;
    r.session.set_silent(false);
    r.session.reply("+OK\r\n");
  } else if (equals_nocase(mode, "off")) {
    state.reply_off = true;
    r.session.set_silent(true);
  } else if (equals_nocase(mode, "skip")) {
    state.skip_next = true;
    r.session.set_silent(true);
  } else {
    reply_syntax_error(r.session);
  }
}

namespace {
// The client types Redis knows (lower case): any other is refused, as by Redis.
bool known_client_type(std::string_view type) {
  return type == "normal" || type == "pubsub" || type == "master" || type == "replica" ||
         type == "slave";
}
}  // namespace

// CLIENT LIST [TYPE normal|pubsub|master|replica] [ID id ...]
void client_list(const Routed& r) {
  const auto& args = r.request.args;
  auto filter = std::make_shared<ClientFilter>();
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (equals_nocase(args[i], "type") && i + 1 < args.size()) {
      filter->type = std::string(args[++i]);
      for (auto& c : filter->type)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!known_client_type(filter->type))
        return r.session.reply_error(error_message(ClientError::UnknownClientType, args[i]));
    } else if (equals_nocase(args[i], "id") && i + 1 < args.size()) {
      while (i + 1 < args.size()) {
        auto id = parse_integer(args[++i]);
        if (!id || *id <= 0)
          return r.session.reply_error(error_message(ClientError::InvalidClientId));
        filter->ids.push_back(static_cast<std::uint64_t>(*id));
      }
    } else {
      return reply_syntax_error(r.session);
    }
  }
  across_workers<std::string>(
      r,
      [filter](WorkerServices& worker) {
        std::string lines;
        worker.for_each_client([&](RequestContext& session) {
          if (!session.closed() && filter->matches(session)) lines += session.describe() + "\n";
        });
        return lines;
      },
      [](const std::vector<std::string>& parts) {
        std::string text;
        for (const auto& part : parts) text += part;
        std::string out;
        RespWriter(out).bulk(text);
        return out;
      });
}

// CLIENT KILL addr:port | CLIENT KILL [ID id] [ADDR a] [LADDR a] [USER u] [TYPE t]
//                                     [SKIPME yes|no] [MAXAGE s]
void client_kill(const Routed& r) {
  const auto& args = r.request.args;
  auto filter = std::make_shared<ClientFilter>();
  bool old_form = args.size() == 3;
  if (old_form) {
    filter->addr = std::string(args[2]);
  } else {
    filter->skip = r.session.state().id;
    if ((args.size() - 2) % 2 != 0) return reply_syntax_error(r.session);
    for (std::size_t i = 2; i + 1 < args.size(); i += 2) {
      std::string_view option = args[i];
      std::string value(args[i + 1]);
      if (equals_nocase(option, "id")) {
        auto id = parse_integer(value);
        if (!id || *id <= 0) return r.session.reply_error(error_message(ClientError::KillClientId));
        filter->ids.push_back(static_cast<std::uint64_t>(*id));
      } else if (equals_nocase(option, "addr")) {
        filter->addr = value;
      } else if (equals_nocase(option, "laddr")) {
        filter->laddr = value;
      } else if (equals_nocase(option, "user")) {
        if (value != "default" && find_user(r.session.worker().config(), value) == nullptr)
          return r.session.reply_error(error_message(ClientError::KillNoSuchUser, value));
        filter->user = value;
      } else if (equals_nocase(option, "type")) {
        for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!known_client_type(value))
          return r.session.reply_error(
              error_message(ClientError::UnknownClientType, args[i + 1]));
        filter->type = value;
      } else if (equals_nocase(option, "skipme")) {
        if (equals_nocase(value, "yes")) {
          filter->skip = r.session.state().id;
        } else if (equals_nocase(value, "no")) {
          filter->skip = 0;
        } else {
          return reply_syntax_error(r.session);
        }
      } else if (equals_nocase(option, "maxage")) {
        auto age = parse_integer(value);
        if (!age) return reply_syntax_error(r.session);
        filter->max_age = *age;
      } else {
        return reply_syntax_error(r.session);
      }
    }
  }
  std::uint64_t self = r.session.state().id;
  across_workers<long long>(
      r,
      [filter, self](WorkerServices& worker) {
        long long killed = 0;
        worker.for_each_client([&](RequestContext& session) {
          if (session.closed() || !filter->matches(session)) return;
          ++killed;
          // The caller itself is closed once its reply is out.
          if (session.state().id == self) {
            session.close_after_replies();
          } else {
            session.close();
          }
        });
        return killed;
      },
      [old_form](const std::vector<long long>& counts) {
        long long total = 0;
        for (auto n : counts) total += n;
        std::string out;
        if (!old_form) {
          RespWriter(out).integer(total);
        } else if (total > 0) {
          RespWriter(out).simple("OK");
        } else {
          RespWriter(out).error(error_message(ClientError::ClientNotFound));
        }
        return out;
      });
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]
void client_unblock(const Routed& r) {
  const auto& args = r.request.args;
  auto id = parse_integer(args[2]);
  if (!id) return r.session.reply_error(error_message(ClientError::NotAnInteger));
  bool with_error = false;
  if (args.size() == 4) {
    if (equals_nocase(args[3], "error")) {
      with_error = true;
    } else if (!equals_nocase(args[3], "timeout")) {
      return r.session.reply_error(error_message(ClientError::UnblockReason));
    }
  } else if (args.size() > 4) {
    return reply_syntax_error(r.session);
  }
  auto target = static_cast<std::uint64_t>(*id);
  across_workers<long long>(
      r,
      [target, with_error](WorkerServices& worker) {
        long long unblocked = 0;
        worker.for_each_client([&](RequestContext& session) {
          if (session.state().id == target && session.unblock(with_error)) unblocked = 1;
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
