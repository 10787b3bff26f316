// CLIENT TRACKING, CLIENT CACHING, CLIENT TRACKINGINFO, CLIENT GETREDIR: client-side caching
// through Santral (router/tracking/tracking_lanes.h), with Redis 7.0's options and errors.
#include <optional>
#include <string>
#include <vector>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/commands/client_commands.h"
#include "router/merge/collecting_merge.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"
#include "router/tracking/tracking_lanes.h"

namespace santral::router {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::error_message;
using protocol::RespWriter;
using Mode = TrackingSettings::Mode;

namespace {

// Answers +OK once every broadcast connection has answered its PING: by then each one's
// CLIENT TRACKING ON BCAST is in force, so no write after the OK can go unreported.
class BroadcastReady final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override { out.append("+OK\r\n"); }
};

struct TrackingRequest {
  bool on = false;
  std::uint64_t redirect = 0;  // REDIRECT <client id>, 0 for none
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string> prefixes;
};

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
std::optional<ClientError> parse(std::span<const std::string_view> args, TrackingRequest& out) {
  for (std::size_t j = 3; j < args.size(); ++j) {
    bool more = j + 1 < args.size();
    if (equals_nocase(args[j], "redirect") && more) {
      if (out.redirect != 0) return ClientError::TrackingRedirectTwice;
      auto id = protocol::parse_integer(args[++j]);
      if (!id) return ClientError::NotAnInteger;
      // Redis takes any integer and then finds no client with a negative id or 0.
      if (*id <= 0) return ClientError::TrackingRedirectMissing;
      out.redirect = static_cast<std::uint64_t>(*id);
    } else if (equals_nocase(args[j], "bcast")) {
      out.bcast = true;
    } else if (equals_nocase(args[j], "optin")) {
      out.optin = true;
    } else if (equals_nocase(args[j], "optout")) {
      out.optout = true;
    } else if (equals_nocase(args[j], "noloop")) {
      out.noloop = true;
    } else if (equals_nocase(args[j], "prefix") && more) {
      out.prefixes.emplace_back(args[++j]);
    } else {
      return ClientError::SyntaxError;
    }
  }
  if (equals_nocase(args[2], "on")) {
    out.on = true;
  } else if (!equals_nocase(args[2], "off")) {
    return ClientError::SyntaxError;
  }
  return std::nullopt;
}

bool overlap(std::string_view a, std::string_view b) {
  return a.starts_with(b) || b.starts_with(a);
}

// Redis's checks before enabling, in Redis's order; the error, if any, is written to `error`.
bool compatible(const TrackingRequest& request, const TrackingSettings& current,
                std::string& error) {
  auto fail = [&](ClientError code, auto&&... args) {
    error = error_message(code, args...);
    return false;
  };
  if (!request.bcast && !request.prefixes.empty())
    return fail(ClientError::TrackingPrefixNeedsBcast);
  if (current.on && (current.mode == Mode::Broadcast) != request.bcast)
    return fail(ClientError::TrackingSwitchBcast);
  if (request.bcast && (request.optin || request.optout))
    return fail(ClientError::TrackingBcastOptions);
  if (request.optin && request.optout) return fail(ClientError::TrackingOptInAndOptOut);
  if (current.on && ((request.optin && current.mode == Mode::OptOut) ||
                     (request.optout && current.mode == Mode::OptIn)))
    return fail(ClientError::TrackingSwitchOptMode);
  if (!request.bcast) return true;
  const auto& given = request.prefixes;
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (current.on)
      for (const auto& existing : current.prefixes)
        if (overlap(existing, given[i]))
          return fail(ClientError::TrackingPrefixOverlapsExisting, given[i], existing);
    for (std::size_t j = i + 1; j < given.size(); ++j)
      if (overlap(given[i], given[j]))
        return fail(ClientError::TrackingPrefixOverlapsGiven, given[i], given[j]);
  }
  return true;
}

void enable(const TrackingRequest& request, unsigned redirect_worker, TrackingSettings& settings) {
  bool was_on = settings.on;
  settings.on = true;
  settings.redirect = request.redirect;
  settings.redirect_worker = redirect_worker;
  settings.redirect_broken = false;
  settings.mode = request.bcast    ? Mode::Broadcast
                  : request.optin  ? Mode::OptIn
                  : request.optout ? Mode::OptOut
                                   : Mode::Default;
  settings.noloop = request.noloop;
  if (!was_on) settings.prefixes.clear();
  if (request.bcast) {
    if (request.prefixes.empty()) settings.prefixes.emplace_back();  // "": every key
    for (const auto& prefix : request.prefixes) settings.prefixes.push_back(prefix);
  }
}

// The broadcast connections' PINGs, answered by +OK when all are in.
void answer_when_broadcasting(const Routed& r) {
  auto& client = r.client;
  auto& worker = client.worker();
  auto connections = worker.lanes().broadcast_to(client.state().id, client.state().database);
  MergeBrief brief;
  brief.command = "CLIENT TRACKING";
  for (auto* connection : connections)
    brief.fragment_names.push_back(connection->target().shard_name);
  auto slot = client.open_slot(static_cast<std::uint32_t>(connections.size()),
                               std::make_unique<BroadcastReady>(std::move(brief)));
  for (std::uint32_t f = 0; f < connections.size(); ++f)
    connections[f]->send("*1\r\n$4\r\nPING\r\n", &client, slot, f);
}

}  // namespace

void client_tracking(const Routed& r) {
  auto& client = r.client;
  auto& settings = client.state().tracking;
  TrackingRequest request;
  if (auto error = parse(r.request.args, request)) return client.reply_error(error_message(*error));
  if (!request.on) {
    settings = TrackingSettings{};
    return client.reply("+OK\r\n");
  }
  // As Redis: the client redirected to must exist now (it may go later: TRACKINGINFO then says
  // broken_redirect). A RESP2 client without REDIRECT is accepted and told nothing, as by Redis.
  unsigned redirect_worker = 0;
  if (request.redirect != 0) {
    auto worker = client.worker().shared().clients.worker_of(request.redirect);
    if (!worker) return client.reply_error(error_message(ClientError::TrackingRedirectMissing));
    redirect_worker = *worker;
  }
  std::string error;
  if (!compatible(request, settings, error)) return client.reply_error(error);
  enable(request, redirect_worker, settings);
  if (settings.mode == Mode::Broadcast) return answer_when_broadcasting(r);
  client.reply("+OK\r\n");
}

// CLIENT CACHING YES|NO: whether the next command's reads are tracked (OPTIN / OPTOUT).
void client_caching(const Routed& r) {
  auto& settings = r.client.state().tracking;
  if (!settings.on || (settings.mode != Mode::OptIn && settings.mode != Mode::OptOut))
    return r.client.reply_error(error_message(ClientError::CachingNotInMode));
  std::string_view answer = r.request.args[2];
  if (equals_nocase(answer, "yes")) {
    if (settings.mode != Mode::OptIn)
      return r.client.reply_error(error_message(ClientError::CachingYesNotOptIn));
    settings.caching = true;
  } else if (equals_nocase(answer, "no")) {
    if (settings.mode != Mode::OptOut)
      return r.client.reply_error(error_message(ClientError::CachingNoNotOptOut));
    settings.caching = false;
  } else {
    return r.client.reply_error(error_message(ClientError::SyntaxError));
  }
  r.client.reply("+OK\r\n");
}

namespace {
// -1 when tracking is off, else the client redirected to (0: none).
std::int64_t redirect_shown(const TrackingSettings& settings) {
  return settings.on ? static_cast<std::int64_t>(settings.redirect) : -1;
}
}  // namespace

void client_getredir(const Routed& r) {
  std::string out;
  RespWriter(out).integer(redirect_shown(r.client.state().tracking));
  r.client.reply(out);
}

void client_trackinginfo(const Routed& r) {
  const auto& settings = r.client.state().tracking;
  std::vector<std::string_view> flags;
  if (!settings.on) {
    flags.emplace_back("off");
  } else {
    flags.emplace_back("on");
    static constexpr std::string_view kModes[] = {"", "optin", "optout", "bcast"};
    if (settings.mode != Mode::Default) flags.push_back(kModes[static_cast<int>(settings.mode)]);
    if (settings.caching) flags.emplace_back(*settings.caching ? "caching-yes" : "caching-no");
    if (settings.noloop) flags.emplace_back("noloop");
    if (settings.redirect_broken) flags.emplace_back("broken_redirect");
  }
  std::string out;
  int protocol = r.client.state().protocol;
  RespWriter writer(out, protocol);
  writer.map_header(3);
  writer.bulk("flags");
  if (protocol == 3) {
    out.append(fmt::format("~{}\r\n", flags.size()));  // a set, as Redis answers it
  } else {
    writer.array_header(flags.size());
  }
  for (auto flag : flags) writer.bulk(flag);
  writer.bulk("redirect");
  writer.integer(redirect_shown(settings));
  writer.bulk("prefixes");
  writer.array_header(settings.prefixes.size());
  for (const auto& prefix : settings.prefixes) writer.bulk(prefix);
  r.client.reply(out);
}

}  // namespace santral::router
