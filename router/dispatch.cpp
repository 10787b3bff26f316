#include "router/dispatch.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include <fmt/format.h>

#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "router/client_session.h"
#include "router/routing.h"

namespace santral::router {

using protocol::ClientError;
using protocol::CommandSpec;
using protocol::error_message;
using protocol::Routing;

namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Redis's words for an unknown command: "unknown command 'x', with args beginning with: 'a' 'b' "
void reply_unknown(ClientSession& session, const protocol::Request& request) {
  std::string args;
  for (std::size_t i = 1; i < request.args.size() && args.size() < 128; ++i)
    fmt::format_to(std::back_inserter(args), "'{}' ", request.args[i].substr(0, 128));
  session.reply_error(error_message(ClientError::UnknownCommand,
                                    std::string(request.name().substr(0, 128)), args));
}

// Commands a client may send before AUTH, as in Redis (CMD_NO_AUTH).
bool allowed_before_auth(const CommandSpec& spec) {
  using protocol::LocalHandler;
  return spec.local == LocalHandler::Auth || spec.local == LocalHandler::Hello ||
         spec.local == LocalHandler::Quit || spec.local == LocalHandler::Reset;
}

}  // namespace

void dispatch(ClientSession& session, const protocol::Request& request) {
  const CommandSpec* spec = protocol::find_command(request.name());
  if (spec == nullptr) return reply_unknown(session, request);
  // A container needs a subcommand; COMMAND also runs without one.
  if (spec->routing == Routing::Container && request.args.size() < 2)
    return session.reply_error(error_message(ClientError::WrongArity, spec->name));
  if (!spec->subcommands.empty() && request.args.size() >= 2) {
    const CommandSpec* sub = protocol::find_subcommand(*spec, request.args[1]);
    if (sub == nullptr)
      return session.reply_error(error_message(ClientError::UnknownSubcommand,
                                               std::string(request.args[1].substr(0, 128)),
                                               upper(spec->name)));
    spec = sub;
  }
  if (!spec->arity_ok(request.args.size()))
    return session.reply_error(error_message(ClientError::WrongArity, spec->name));
  if (!session.state().authenticated && !allowed_before_auth(*spec))
    return session.reply_error(error_message(ClientError::NoAuth));

  Routed routed{session, request, *spec};
  switch (spec->routing) {
    case Routing::Keyed:
      return route_keyed(routed);
    case Routing::Channel:
      return route_channel(routed);
    case Routing::Any:
      return route_any(routed);
    case Routing::Local:
      return run_local(routed);
    case Routing::Refused:
      return session.reply_error(error_message(ClientError::Refused, upper(spec->name), spec->reason));
    case Routing::Split:
    case Routing::Broadcast:
    case Routing::Stateful:
    case Routing::Container:
      break;
  }
  static constexpr std::string_view kKinds[] = {"keyed", "split", "broadcast", "any", "channel",
                                                "local", "stateful", "refused", "container"};
  session.reply_error(error_message(ClientError::NotYetSupported, upper(spec->name),
                                    kKinds[static_cast<std::size_t>(spec->routing)]));
}

}  // namespace santral::router
