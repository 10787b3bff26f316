#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/devector.hpp>

#include "config/config.h"
#include "router/backend/backend_target.h"
#include "router/backend/reply_sink.h"
#include "router/metrics/stats.h"

namespace santral::router {

// What a shard connection has sent (or queued to send), oldest first: the shard answers in
// order, so the oldest request owns the next reply. Its clients' requests, and the connection's
// own (the handshake, a WAIT, a PING), whose replies it reads itself.
class InFlightRequests {
 public:
  struct Request {
    ReplySinkPtr sink;
    std::uint64_t slot;
    std::uint32_t fragment;
    ReplyOwner owner;
    std::chrono::steady_clock::time_point sent;
    std::chrono::steady_clock::time_point deadline;
    config::WriteConcern concern{};              // a ClientWrite's
    std::chrono::steady_clock::duration held{};  // waiting for a failover before it was sent
  };
  // The oldest request is past its deadline: the connection gives up on it and all behind it.
  struct Overdue {
    bool client;  // a client's request (or the WAIT behind its writes), not the connection's own
    std::chrono::milliseconds limit;
    std::string_view setting;  // the setting that set it (timeouts.request_ms, ...)
  };

  void push_back(Request request) { requests_.push_back(std::move(request)); }
  // The handshake's commands, whose replies `owners` are (in the order they are written), go
  // ahead of everything queued before.
  void put_first(const std::vector<ReplyOwner>& owners, std::chrono::steady_clock::time_point now,
                 std::chrono::steady_clock::duration timeout);
  Request take_front() {
    Request front = std::move(requests_.front());
    requests_.pop_front();
    return front;
  }
  bool empty() const { return requests_.empty(); }
  std::size_t size() const { return requests_.size(); }
  // The handshake's replies (HELLO, AUTH, CLIENT TRACKING, SELECT, CLIENT ID) are not all in.
  bool handshaking() const;
  // Whether a request of a client (or a pinned transaction's MULTI) is unanswered: given up on,
  // it may still run. A handshake, a health PING or a WAIT running late changes nothing.
  bool carries_requests() const;
  std::optional<Overdue> overdue(std::chrono::steady_clock::time_point now,
                                 const config::Timeouts& timeouts) const;
  // Everything, taken out (this is left empty).
  InFlightRequests take();
  // Each client's request hears `reply`, as the answer of shard `shard`.
  void fail(const std::string& reply, std::size_t shard, ShardStats& stats) const;

 private:
  // A devector: it reuses its room as replies come in (a deque allocates a block every few
  // requests as it slides).
  boost::container::devector<Request> requests_;
};

}  // namespace santral::router
