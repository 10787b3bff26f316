#include "router/plan/dispatch.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include <fmt/format.h>

#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "router/session/client_session.h"
#include "router/hotkeys/detection/hot_key_detector.h"
#include "router/hotkeys/detection/hot_key_observer.h"
#include "router/hotkeys/near_cache/near_cache_route.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/hotkeys/salting/salted_route.h"
#include "router/routes/routing.h"
#include "router/process/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::CommandSpec;
using protocol::error_message;
using protocol::LocalHandler;
using protocol::Routing;
using protocol::StatefulKind;

namespace {

// Redis's words for an unknown command: "unknown command 'x', with args beginning with: 'a' 'b' "
void reply_unknown(ClientSession& session, const protocol::Request& request) {
  std::string args;
  for (std::size_t i = 1; i < request.args.size() && args.size() < 128; ++i)
    fmt::format_to(std::back_inserter(args), "'{}' ", request.args[i].substr(0, 128));
  session.reply_error(
      error_message(ClientError::UnknownCommand, std::string(request.name().substr(0, 128)), args));
}

// Commands a client may send before AUTH, as in Redis (CMD_NO_AUTH).
bool allowed_before_auth(const CommandSpec& spec) {
  return spec.local == LocalHandler::Auth || spec.local == LocalHandler::Hello ||
         spec.local == LocalHandler::Quit || spec.local == LocalHandler::Reset;
}

// What a RESP2 client may send while subscribed, as in Redis.
bool allowed_while_subscribed(const CommandSpec& spec) {
  return spec.stateful == StatefulKind::Subscribe || spec.local == LocalHandler::Ping ||
         spec.local == LocalHandler::Quit || spec.local == LocalHandler::Reset;
}

// Commands that end or leave a transaction, or the connection, and are not queued in it.
bool runs_inside_multi(const CommandSpec& spec) {
  return spec.stateful == StatefulKind::Transaction || spec.local == LocalHandler::Quit ||
         spec.local == LocalHandler::Reset;
}

// WAIT counts the replicas that have this client's earlier writes, so those must be done;
// RESET closes connections whose earlier replies must arrive first.
bool waits_for_earlier_replies(const CommandSpec& spec) {
  return (spec.stateful == StatefulKind::Blocking && spec.key_specs.empty()) ||
         spec.local == LocalHandler::Reset;
}

void route_stateful(const Routed& routed) {
  switch (routed.spec.stateful) {
    case StatefulKind::Transaction:
      return route_transaction(routed);
    case StatefulKind::Blocking:
      return route_blocking(routed);
    case StatefulKind::Subscribe:
      return route_subscription(routed);
    case StatefulKind::None:
      break;
  }
}

}  // namespace

Dispatched dispatch(ClientSession& session, const protocol::Request& request) {
  const CommandSpec* spec = protocol::find_command(request.name());
  if (spec == nullptr) {
    reply_unknown(session, request);
    return Dispatched::Done;
  }
  // A container needs a subcommand; COMMAND also runs without one.
  if (spec->routing == Routing::Container && request.args.size() < 2) {
    session.reply_error(error_message(ClientError::WrongArity, spec->name));
    return Dispatched::Done;
  }
  if (!spec->subcommands.empty() && request.args.size() >= 2) {
    const CommandSpec* sub = protocol::find_subcommand(*spec, request.args[1]);
    if (sub == nullptr) {
      session.reply_error(error_message(ClientError::UnknownSubcommand,
                                        std::string(request.args[1].substr(0, 128)),
                                        upper_name(*spec)));
      return Dispatched::Done;
    }
    spec = sub;
  }
  if (!session.idle() && waits_for_earlier_replies(*spec)) return Dispatched::AfterEarlierReplies;
  if (session.fills_in_flight() > 0 && !spec->has(protocol::kReadonly))
    return Dispatched::AfterEarlierReplies;
  session.begin(*spec);
  if (!spec->arity_ok(request.args.size())) {
    session.reply_error(error_message(ClientError::WrongArity, spec->name));
    return Dispatched::Done;
  }
  if (!session.state().authenticated && !allowed_before_auth(*spec)) {
    session.reply_error(error_message(ClientError::NoAuth));
    return Dispatched::Done;
  }
  session.state().last_command = spec->name;
  if (session.state().protocol == 2 && session.subscribed() && !allowed_while_subscribed(*spec)) {
    session.reply_error(error_message(ClientError::SubscribedMode, spec->name));
    return Dispatched::Done;
  }

  Routed routed{session, request, *spec};
  if (!spec->key_specs.empty()) {
    auto& worker = session.worker();
    if (worker.hotkeys().due()) observe_hot_key(routed);
    // Anything not read-only may change its keys (a script's included).
    if (worker.shard_map().near_cache_anywhere() && !spec->has(protocol::kReadonly))
      forget_written_keys(routed);
    if (!worker.salts().empty() && route_salted(routed)) return Dispatched::Done;
  } else if (spec->has(protocol::kWrite) && session.worker().shard_map().near_cache_anywhere()) {
    forget_all_keys(routed);
  }
  if (session.in_transaction() && !runs_inside_multi(*spec)) {
    route_queued(routed);
    return Dispatched::Done;
  }
  if (session.worker().shard_map().near_cache_anywhere() && route_near_cache(routed))
    return Dispatched::Done;
  switch (spec->routing) {
    case Routing::Keyed:
      route_keyed(routed);
      break;
    case Routing::Split:
      route_split(routed);
      break;
    case Routing::Broadcast:
      route_broadcast(routed);
      break;
    case Routing::Any:
      route_any(routed);
      break;
    case Routing::Channel:
      route_channel(routed);
      break;
    case Routing::Local:
      run_local(routed);
      break;
    case Routing::Stateful:
      route_stateful(routed);
      break;
    case Routing::Refused:
      session.reply_error(error_message(ClientError::Refused, upper_name(*spec), spec->reason));
      break;
    case Routing::Container:
      break;  // COMMAND without a subcommand is `any`; other containers were handled above
  }
  return Dispatched::Done;
}

}  // namespace santral::router
