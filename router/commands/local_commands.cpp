// Commands Santral answers itself, one handler per LocalHandler of the command table.
#include <algorithm>
#include <array>

#include "protocol/arguments.h"
#include "protocol/command_table.h"
#include "protocol/command_table_data.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/acl/user_directory.h"
#include "router/commands/acl_commands.h"
#include "router/commands/client_commands.h"
#include "router/commands/cluster_commands.h"
#include "router/commands/local_reply.h"
#include "router/commands/santral_commands.h"
#include "router/commands/slowlog_commands.h"
#include "router/hotkeys/detection/hot_key_commands.h"
#include "router/routes/routing.h"
#include "router/routes/script_cache.h"
#include "router/routes/subscriptions.h"
#include "router/routes/transaction.h"
#include "router/runtime/request_context.h"
#include "router/runtime/tenant_limiter.h"
#include "router/runtime/worker_services.h"
#include "santral/version.h"

namespace santral::router {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::error_message;
using protocol::LocalHandler;
using protocol::parse_integer;
using protocol::RespWriter;

namespace {

using Handler = void (*)(const Routed&);

void ok(const Routed& r) {
  r.client.reply("+OK\r\n");
}

void ping(const Routed& r) {
  // COMMAND says -1; Redis's PING itself refuses more than one message.
  if (r.request.args.size() > 2)
    return r.client.reply_error(error_message(ClientError::WrongArity, "ping"));
  std::string_view message = r.request.args.size() > 1 ? r.request.args[1] : std::string_view{};
  // A subscribed RESP2 client gets PING's pub/sub form, as from Redis.
  if (r.client.state().protocol == 2 && r.client.held().subscribed()) {
    return answer(r, [&](RespWriter& w) {
      w.array_header(2);
      w.bulk("pong");
      w.bulk(message);
    });
  }
  if (route_ping_past_scripts(r)) return;
  if (r.request.args.size() == 1) return r.client.reply("+PONG\r\n");
  answer(r, [&](RespWriter& w) { w.bulk(message); });
}

void echo(const Routed& r) {
  answer(r, [&](RespWriter& w) { w.bulk(r.request.args[1]); });
}

// SCRIPT EXISTS sha ...: the scripts Santral has seen (EVAL, SCRIPT LOAD), which it loads on
// any shard an EVALSHA meets without them; SCRIPT FLUSH through Santral forgets them.
void script_exists(const Routed& r) {
  const auto& scripts = r.client.worker().scripts();
  answer(r, [&](RespWriter& w) {
    w.array_header(r.request.args.size() - 2);
    for (std::size_t i = 2; i < r.request.args.size(); ++i)
      w.integer(scripts.knows(r.request.args[i]) ? 1 : 0);
  });
}

void quit(const Routed& r) {
  r.client.reply("+OK\r\n");
  r.client.close_after_replies();
}

// SELECT n: later requests use connections that have SELECTed n on every shard.
void select(const Routed& r) {
  auto db = parse_integer(r.request.args[1]);
  if (!db) return r.client.reply_error(error_message(ClientError::NotAnInteger));
  int databases = r.client.worker().config().databases;
  if (*db < 0 || *db >= databases)
    return r.client.reply_error(error_message(ClientError::SelectInvalid, databases - 1));
  if (r.client.held().transaction().holds_connection() && *db != r.client.state().database)
    return r.client.reply_error(error_message(ClientError::PinnedConnection, "SELECT"));
  r.client.state().database = static_cast<int>(*db);
  ok(r);
}

// Checks a user and password against the config; answers the client itself on failure.
bool authenticate(const Routed& r, std::string_view user, std::string_view password, bool named) {
  const auto& config = r.client.worker().config();
  bool valid = false;
  if (user == "default" && config.password.empty() && config.users.empty()) {
    // Like Redis's `nopass` default user: a named AUTH succeeds, a bare one is a mistake.
    if (!named) {
      r.client.reply_error(error_message(ClientError::AuthNotConfigured));
      return false;
    }
    valid = true;
  } else {
    valid = password_valid(config, user, password);
  }
  if (!valid) {
    log_auth_failure(r.client, user);
    r.client.reply_error(error_message(ClientError::AuthFailed));
    return false;
  }
  auto& state = r.client.state();
  auto* limiter = r.client.worker().shared().limiters.find(user);
  if (limiter != state.limiter) {
    if (limiter != nullptr && !limiter->add_connection()) {
      r.client.reply_error(
          error_message(ClientError::UserConnectionLimit, user, limiter->limits().max_connections));
      return false;
    }
    if (state.limiter != nullptr) state.limiter->remove_connection();
    state.limiter = limiter;
  }
  state.authenticated = true;
  state.user = std::string(user);
  state.permissions_version = 0;  // its rules are resolved at the next command
  return true;
}

void auth(const Routed& r) {
  const auto& args = r.request.args;
  if (args.size() > 3) return r.client.reply_error(error_message(ClientError::SyntaxError));
  bool named = args.size() == 3;
  if (authenticate(r, named ? args[1] : "default", args.back(), named)) ok(r);
}

// HELLO [protover [AUTH user pass] [SETNAME name]]. A RESP3 client's requests go over
// connections that said HELLO 3 to the shards, so their replies are RESP3 as sent.
// The version is the lowest the shards run (INFO server's redis_version, read at connect by
// router/catalog/): what a client may count on; before any shard answered, the version of the
// Redis Santral's table was generated from.
std::string_view shards_version(const WorkerServices& worker) {
  const auto& lowest = worker.learned().lowest_version();
  return lowest.empty() ? protocol::generated_from_version() : std::string_view(lowest);
}

void hello(const Routed& r) {
  const auto& args = r.request.args;
  auto& state = r.client.state();
  long long version = state.protocol;
  std::size_t i = 1;
  if (args.size() > 1) {
    auto requested = parse_integer(args[1]);
    if (!requested)
      return r.client.reply_error(error_message(ClientError::ProtocolVersionNotInteger));
    version = *requested;
    i = 2;
    if (version != 2 && version != 3)
      return r.client.reply_error(error_message(ClientError::NoProto));
  }
  std::string_view new_name;
  bool rename = false;
  for (; i < args.size(); ++i) {
    if (equals_nocase(args[i], "AUTH") && i + 2 < args.size()) {
      if (!authenticate(r, args[i + 1], args[i + 2], true)) return;
      i += 2;
    } else if (equals_nocase(args[i], "SETNAME") && i + 1 < args.size()) {
      new_name = args[++i];
      rename = true;
      if (!valid_client_name(new_name))
        return r.client.reply_error(error_message(ClientError::InvalidClientName));
    } else {
      return r.client.reply_error(error_message(ClientError::HelloOptionSyntax, args[i]));
    }
  }
  if (!state.authenticated) return r.client.reply_error(error_message(ClientError::HelloNoAuth));
  if (r.client.held().transaction().holds_connection() && version != state.protocol)
    return r.client.reply_error(error_message(ClientError::PinnedConnection, "HELLO"));
  if (rename) state.name = std::string(new_name);
  state.protocol = static_cast<int>(version);
  // Tracking stays on, as on Redis: a RESP2 client gets its invalidations only through REDIRECT.
  answer(r, [&](RespWriter& w) {
    w.map_header(7);
    w.bulk("server");
    w.bulk("redis");
    w.bulk("version");
    w.bulk(shards_version(r.client.worker()));
    w.bulk("proto");
    w.integer(state.protocol);
    w.bulk("id");
    w.integer(static_cast<std::int64_t>(state.id));
    w.bulk("mode");
    w.bulk(r.client.worker().config().cluster_endpoint ? "cluster" : "standalone");
    w.bulk("role");
    w.bulk("master");
    w.bulk("modules");
    w.array_header(0);
  });
}

// RESET: as a fresh connection: no transaction, no subscriptions, database and protocol back
// to their defaults, CLIENT REPLY ON, and unauthenticated if the config requires AUTH.
void reset(const Routed& r) {
  auto& client = r.client;
  auto& state = client.state();
  client.held().transaction().abandon(client);
  client.held().subscriptions().abandon(client);
  const auto& config = client.worker().config();
  state.name.clear();
  state.protocol = 2;
  state.database = config.backend.database;
  state.reply_off = state.skip_next = false;
  state.tracking = TrackingSettings{};
  state.user = "default";
  state.permissions_version = 0;
  if (auto* limiter = std::exchange(state.limiter, nullptr)) limiter->remove_connection();
  state.authenticated = config.password.empty() && config.users.empty();
  if (std::exchange(state.monitoring, false)) client.worker().shared().monitors.remove(state.id);
  client.set_silent(false);
  client.reply("+RESET\r\n");
}

// MONITOR: from now on this client is shown every command the router runs
// (router/routes/monitor_feed.h), until RESET or it leaves; as on Redis, it may not touch keys
// meanwhile (ClientError::MonitorKeyspace).
void monitor(const Routed& r) {
  auto& state = r.client.state();
  if (!std::exchange(state.monitoring, true))
    r.client.worker().shared().monitors.add(state.id, r.client.worker().index());
  ok(r);
}

void help(const Routed& r) {
  const auto* container = protocol::find_command(r.request.args[0]);
  answer(r, [&](RespWriter& w) {
    std::vector<std::string> lines;
    lines.push_back(upper_name(*container) + " <subcommand> [<arg> ...]. Through Santral:");
    for (const auto& sub : container->subcommands) {
      if (sub.routing == protocol::Routing::Refused) continue;
      lines.push_back("  " + upper_name(sub).substr(container->name.size() + 1));
    }
    w.array_header(lines.size());
    for (const auto& line : lines) w.simple(line);
  });
}

// The built-in table's commands (those a test build hides are not found) and those learned
// from the shards and `commands:`.
void command_count(const Routed& r) {
  auto known = std::count_if(protocol::all_commands().begin(), protocol::all_commands().end(),
                             [](const protocol::CommandSpec& spec) {
                               return protocol::find_command(spec.name) != nullptr;
                             });
  answer(r, [&](RespWriter& w) {
    w.integer(static_cast<std::int64_t>(known + r.client.worker().learned().size()));
  });
}

void acl_whoami(const Routed& r) {
  answer(r, [&](RespWriter& w) { w.bulk(r.client.state().user); });
}

constexpr std::size_t kHandlers = static_cast<std::size_t>(LocalHandler::Monitor) + 1;

struct HandlerTable {
  std::array<Handler, kHandlers> handlers{};
  std::array<bool, kHandlers> present{};
};

constexpr HandlerTable kTable = [] {
  HandlerTable table;
  auto set = [&table](LocalHandler h, Handler f) {
    table.handlers[static_cast<std::size_t>(h)] = f;
    table.present[static_cast<std::size_t>(h)] = true;
  };
  set(LocalHandler::Ok, ok);
  set(LocalHandler::Ping, ping);
  set(LocalHandler::Echo, echo);
  set(LocalHandler::Quit, quit);
  set(LocalHandler::Hello, hello);
  set(LocalHandler::Auth, auth);
  set(LocalHandler::Select, select);
  set(LocalHandler::Reset, reset);
  set(LocalHandler::Help, help);
  set(LocalHandler::SeenScripts, script_exists);
  set(LocalHandler::CommandCount, command_count);
  set(LocalHandler::ClientGetname, client_getname);
  set(LocalHandler::ClientSetname, client_setname);
  set(LocalHandler::ClientGetredir, client_getredir);
  set(LocalHandler::ClientId, client_id);
  set(LocalHandler::ClientInfo, client_info);
  set(LocalHandler::ClientKill, client_kill);
  set(LocalHandler::ClientList, client_list);
  set(LocalHandler::ClientNoEvict, client_no_evict);
  set(LocalHandler::ClientReply, client_reply);
  set(LocalHandler::ClientTrackinginfo, client_trackinginfo);
  set(LocalHandler::ClientTracking, client_tracking);
  set(LocalHandler::ClientCaching, client_caching);
  set(LocalHandler::ClientUnblock, client_unblock);
  set(LocalHandler::AclWhoami, acl_whoami);
  set(LocalHandler::AclList, acl_list);
  set(LocalHandler::AclGetuser, acl_getuser);
  set(LocalHandler::AclCat, acl_cat);
  set(LocalHandler::AclDryrun, acl_dryrun);
  set(LocalHandler::AclLog, acl_log);
  set(LocalHandler::AclUsers, acl_users);
  set(LocalHandler::ClusterInfo, cluster_info);
  set(LocalHandler::ClusterSlots, cluster_slots);
  set(LocalHandler::ClusterShards, cluster_shards);
  set(LocalHandler::ClusterNodes, cluster_nodes);
  set(LocalHandler::ClusterMyid, cluster_myid);
  set(LocalHandler::ClusterMyshardid, cluster_myshardid);
  set(LocalHandler::ClusterKeyslot, cluster_keyslot);
  set(LocalHandler::ClusterCountkeysinslot, cluster_countkeysinslot);
  set(LocalHandler::ClusterGetkeysinslot, cluster_getkeysinslot);
  set(LocalHandler::Asking, asking);
  set(LocalHandler::SantralExplain, santral_explain);
  set(LocalHandler::SantralReload, santral_reload);
  set(LocalHandler::SantralReshard, santral_reshard);
  set(LocalHandler::SantralBalance, santral_balance);
  set(LocalHandler::SantralAnalyze, santral_analyze);
  set(LocalHandler::SantralShardmap, santral_shardmap);
  set(LocalHandler::SantralMap, santral_map);
  set(LocalHandler::SantralRouters, santral_routers);
  set(LocalHandler::SantralFailover, santral_failover);
  set(LocalHandler::SantralHotkeys, santral_hotkeys);
  set(LocalHandler::SantralSalt, santral_salt);
  set(LocalHandler::SantralUnsalt, santral_unsalt);
  set(LocalHandler::SantralShard, santral_shard);
  set(LocalHandler::SlowlogGet, slowlog_get);
  set(LocalHandler::SantralClients, santral_clients);
  set(LocalHandler::SantralSlowlog, santral_slowlog);
  set(LocalHandler::SlowlogLen, slowlog_len);
  set(LocalHandler::SlowlogReset, slowlog_reset);
  set(LocalHandler::Monitor, monitor);
  return table;
}();

static_assert(
    [] {
      for (std::size_t i = 1; i < kHandlers; ++i)
        if (!kTable.present[i]) return false;
      return true;
    }(),
    "every LocalHandler needs a handler");

}  // namespace

void run_local(const Routed& routed) {
  kTable.handlers[static_cast<std::size_t>(routed.spec.local)](routed);
}

}  // namespace santral::router
