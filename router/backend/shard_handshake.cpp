#include "router/backend/shard_handshake.h"

#include <span>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/arguments.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/backend/connection_name.h"
#include "router/backend/shard_login.h"

namespace santral::router {

std::vector<ReplyOwner> ShardHandshake::begin(const Who& who, std::string& outbox) {
  auto login = who.proves ? ShardLogin{who.backend.username, who.backend.password}
                          : shard_login(who.backend);
  std::string prefix;
  protocol::RespWriter writer(prefix);
  std::vector<ReplyOwner> owners;
  auto command = [&](std::span<const std::string_view> args, ReplyOwner owner) {
    writer.command(args);
    owners.push_back(owner);
  };
  std::string_view user = login.user.empty() ? std::string_view("default") : login.user;
  if (who.profile.protocol == 3) {
    if (login.password.empty()) {
      std::string_view args[] = {"HELLO", "3"};
      command(args, ReplyOwner::Handshake);
    } else {
      std::string_view args[] = {"HELLO", "3", "AUTH", user, login.password};
      command(args, ReplyOwner::Handshake);
    }
  } else if (!login.password.empty()) {
    std::string_view args[] = {"AUTH", user, login.password};
    command(args, ReplyOwner::Handshake);
  }
  if (who.role == ConnectionRole::Tracking) {
    // Every key read here from now on is tracked; Redis pushes `invalidate` when it changes.
    std::string_view args[] = {"CLIENT", "TRACKING", "ON"};
    command(args, ReplyOwner::Handshake);
  } else if (who.role == ConnectionRole::TrackingBroadcast) {
    // Every key written anywhere on the shard is pushed here.
    std::string_view args[] = {"CLIENT", "TRACKING", "ON", "BCAST"};
    command(args, ReplyOwner::Handshake);
  }
  std::string db = std::to_string(who.profile.database);
  if (who.profile.database != 0) {
    std::string_view args[] = {"SELECT", db};
    command(args, ReplyOwner::Handshake);
  }
  server_client_id_ = 0;
  if (!who.proves) {
    // Named for the router and this run of it, so that a later run can end this connection
    // (connection_name.h).
    if (!connection_name().empty()) {
      std::string_view args[] = {"CLIENT", "SETNAME", connection_name()};
      command(args, ReplyOwner::Naming);
    }
    // The connection's id on its server: what Santral gives up on is proven not to run by
    // `CLIENT KILL ID` (draining_connections.h), and a switch of topology may have to end the
    // call blocked on a lent connection (CLIENT UNBLOCK, router/routes/blocked_calls.h).
    // Requests wait for it, so that every request sent has an id to end it by.
    std::string_view args[] = {"CLIENT", "ID"};
    command(args, ReplyOwner::ClientId);
  }
  if (owners.empty()) {
    outbox.insert(0, prefix);
    return owners;
  }
  left_ = owners.size();
  held_ = std::exchange(outbox, std::move(prefix));
  return owners;
}

bool ShardHandshake::answered(std::string& outbox) {
  if (left_ == 0 || --left_ > 0) return false;
  outbox.append(held_);
  held_.clear();
  return true;
}

bool ShardHandshake::client_id_answered(std::string_view frame, bool quiet, std::string_view shard,
                                        std::string_view address, std::string& outbox) {
  if (frame.size() > 3 && frame.front() == ':')
    server_client_id_ =
        protocol::parse_integer<std::uint64_t>(frame.substr(1, frame.size() - 3)).value_or(0);
  else if (!quiet)
    spdlog::warn(
        "shard '{}' ({}) refused CLIENT ID ({}): a request Santral gives up on there cannot "
        "be proven not to run late, so a move's switch waits for the shard to close it; "
        "allow CLIENT ID and CLIENT KILL for Santral's user on the shard",
        shard, address, protocol::line_text(frame));
  return answered(outbox);
}

void ShardHandshake::clear() {
  held_.clear();
  left_ = 0;
}

std::string ShardHandshake::refusal(std::string_view frame, bool tracks, bool quiet,
                                    std::string_view shard, std::string_view address) {
  std::string why(frame.substr(1, frame.size() - 3));
  // Tracking needs what shared connections do not: HELLO 3 and CLIENT TRACKING.
  std::string advice = tracks ? "the near cache and client-side caching need Redis >= 6 and "
                                "permission for CLIENT TRACKING; near-cache GETs go the usual way "
                                "meanwhile, or set near_cache.enabled: false"
                              : "check backend.password / backend.database";
  if (!quiet)
    spdlog::error("shard '{}' ({}) refused Santral's {}handshake: {} ({})", shard, address,
                  tracks ? "tracking " : "", why, advice);
  return "handshake failed: " + why + " (" + advice + ")";
}

}  // namespace santral::router
