#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "router/backend/backend_target.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

// A RESP2 array or RESP3 push whose first element is message, pmessage or smessage (Redis
// writes them exactly in this form). Subscribe confirmations are replies to the
// (P|S)SUBSCRIBE that asked for them.
bool is_pubsub_message(std::string_view frame);

// deliver()'s slot for what a shard sends unasked (a pub/sub message, an invalidation).
inline constexpr std::uint64_t kPushSlot = std::numeric_limits<std::uint64_t>::max();

// Where a connection's pushes go: on a subscriber connection, pub/sub messages to the client;
// on a tracking connection, RESP3 invalidations to the near cache or the tracking lane, which
// also hears (connection_lost) whenever the connection, and so what it tracked, is lost.
class PushRoute {
 public:
  explicit PushRoute(ConnectionRole role) : role_(role) {}

  void set_sink(ReplySinkPtr sink) { sink_ = std::move(sink); }
  void drop() { sink_.reset(); }
  bool tracks() const {
    return role_ == ConnectionRole::Tracking || role_ == ConnectionRole::TrackingBroadcast;
  }

  // Whether a complete `frame` is something the shard sent unasked rather than a reply. On a
  // subscriber connection, a pub/sub message; elsewhere only a RESP3 push can be (none is
  // expected): an array is always somebody's reply, even one that starts with "message".
  // Inline: every reply of every connection asks it.
  bool unasked(std::string_view frame) const {
    return role_ == ConnectionRole::Subscriber ? is_pubsub_message(frame) : frame.front() == '>';
  }
  // Hands it to the sink (deliver with kPushSlot and the shard's index), if it has one.
  void deliver(std::string_view frame, std::size_t shard_index);
  // A tracking connection ended: its server forgot what it tracked for it, so whatever was
  // cached through it must go before anyone can be answered from it again.
  void tracking_lost(std::size_t shard_index);
  // The connection is down for good: the sink hears it once and is let go.
  void lost(std::size_t shard_index);

 private:
  ConnectionRole role_;
  ReplySinkPtr sink_;
};

}  // namespace santral::router
