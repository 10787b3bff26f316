#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "router/backend/backend_target.h"

namespace santral::router {

// What a new shard connection says before any request: HELLO/AUTH, CLIENT TRACKING, SELECT,
// CLIENT SETNAME and CLIENT ID, and what their replies tell. Requests queued meanwhile are held
// back (held()) until every one of them has answered OK: a request behind a refused AUTH would
// run as Redis's `default` user.
class ShardHandshake {
 public:
  // Who the connection is. `proves`: the connection that proves others' requests over
  // (draining_connections.h), which logs in as backend.username/password, not as the fleet's
  // per-lease user, and is neither named nor asks its id.
  struct Who {
    const config::BackendOptions& backend;
    ConnectionProfile profile;
    ConnectionRole role = ConnectionRole::Shared;
    bool proves = false;
  };

  // Writes the handshake at the head of `outbox` (what was queued before moves behind it,
  // held). Returns whose each reply is, in the order the commands are written.
  std::vector<ReplyOwner> begin(const Who& who, std::string& outbox);
  // Where a request goes now: held while the handshake is unanswered, else `outbox`.
  std::string& queue(std::string& outbox) { return left_ > 0 ? held_ : outbox; }
  bool answering() const { return left_ > 0; }
  // One command answered OK. True when it was the last: what was held is now in `outbox`.
  bool answered(std::string& outbox);
  // CLIENT ID's reply (then as answered()). `quiet`: a refusal is not logged again.
  bool client_id_answered(std::string_view frame, bool quiet, std::string_view shard,
                          std::string_view address, std::string& outbox);
  // The connection's CLIENT ID on its server (0: not known yet, or refused).
  std::uint64_t server_client_id() const { return server_client_id_; }
  // Forgets what was held (it failed with the connection).
  void clear();

  // Why the shard refused the handshake with `frame` (an error), with advice, for the
  // connection's down reason; logged unless `quiet`.
  static std::string refusal(std::string_view frame, bool tracks, bool quiet,
                             std::string_view shard, std::string_view address);

 private:
  std::string held_;
  std::size_t left_ = 0;  // commands not answered yet
  std::uint64_t server_client_id_ = 0;
};

}  // namespace santral::router
