#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

#include "config/config.h"
#include "router/backend/backend_target.h"
#include "router/backend/confirmed_writes.h"
#include "router/backend/failover_hold.h"
#include "router/backend/in_flight_requests.h"
#include "router/backend/loaded_scripts.h"
#include "router/backend/push_route.h"
#include "router/backend/reply_inbox.h"
#include "router/backend/reply_sink.h"
#include "router/backend/shard_dial.h"
#include "router/backend/shard_handshake.h"
#include "router/backend/shard_health.h"
#include "router/backend/shard_writer.h"
#include "router/backend/write_fence.h"
#include "router/metrics/stats.h"
#include "router/transport/stream.h"

namespace santral::router {

class BackendConnection;
using BackendConnectionPtr = boost::intrusive_ptr<BackendConnection>;

// One connection from a worker to a shard. Requests are written back to back; replies come
// back in the same order, so the oldest in-flight request owns the next reply
// (InFlightRequests). Everything queued in one event-loop turn leaves in one write (ShardWriter).
//
// Failure handling: see ShardHealth (shard_health.h); a request not answered within
// timeouts.request fails, and the connection is dropped and reopened so that its late reply
// can never reach a later request. Write concern: see ConfirmedWrites (confirmed_writes.h).
//
//   Connecting --connected--> Up --N failures--> Down --retry--> Connecting --PONG--> Up
//                                                  ^------------ no PONG ----------'
class BackendConnection final
    : public boost::intrusive_ref_counter<BackendConnection, boost::thread_unsafe_counter>,
      private ShardWriter::Owner {
 public:
  enum class State { Connecting, Up, Down, Stopped };
  // deliver()'s slot for a pub/sub message pushed by a Subscriber connection.
  static constexpr std::uint64_t kPushSlot = router::kPushSlot;

  // Every owner (the pool, the near cache's and the tracking clients' lanes, the mover, the
  // shard sampler) makes its connections here. `push_sink` takes what the shard sends unasked
  // (invalidations); `wait_while_down`: see FailoverHold.
  struct Options {
    ConnectionRole role = ConnectionRole::Shared;
    ReplySinkPtr push_sink;
    std::chrono::milliseconds wait_while_down{0};
    // Requests given up on with the connection stay "draining" until the shard proves they will
    // not run (draining_connections.h). Off only for the connection that sends those proofs.
    bool drains = true;
  };
  // A connection that starts connecting now.
  static BackendConnectionPtr open(boost::asio::io_context& io, BackendTarget target,
                                   std::shared_ptr<const config::Config> config, ShardStats& stats,
                                   Options options);
  static BackendConnectionPtr open(boost::asio::io_context& io, BackendTarget target,
                                   std::shared_ptr<const config::Config> config,
                                   ShardStats& stats) {
    return open(io, std::move(target), std::move(config), stats, Options{});
  }
  // A connection to a shard known to be down, whose requests fail at once with `reason`.
  static BackendConnectionPtr down(boost::asio::io_context& io, BackendTarget target,
                                   std::shared_ptr<const config::Config> config, ShardStats& stats,
                                   ConnectionRole role, const std::string& reason);

  BackendConnection(boost::asio::io_context& io, BackendTarget target,
                    std::shared_ptr<const config::Config> config, ShardStats& stats,
                    ConnectionRole role = ConnectionRole::Shared);
  BackendConnection(const BackendConnection&) = delete;
  BackendConnection& operator=(const BackendConnection&) = delete;

  // Closes the connection; everything in flight fails with a shutting-down error.
  void stop();

  // A request that comes while the shard is marked down waits up to `wait` (failover.wait_ms,
  // for a primary that follows Sentinel) instead of failing at once: until the shard answers
  // again, or until the pool hands it to the connection of Sentinel's new primary.
  using Waiting = FailoverHold::Waiting;
  void wait_while_down(std::chrono::milliseconds wait) { failover_hold_.set_wait(wait); }
  std::deque<Waiting> take_waiting() { return failover_hold_.take(); }
  // Requests another connection held: sent in order (or held on, until their own `until`).
  void adopt_waiting(std::deque<Waiting> waiting);
  // The server is no longer the shard's primary (Sentinel elected another): nothing it answers
  // from now on may reach a client (a stopped primary that wakes up as a replica would confirm
  // writes its resync then wipes). What is in flight fails as for a lost connection, its
  // outcome unknown, and the connection stays down.
  void abandon(const std::string& why);

  // Sends one request (complete RESP bytes). Its reply goes to sink->deliver(slot, fragment)
  // later, or at once if the shard is down. An untimed request (a blocking command) may wait
  // for its reply as long as the shard takes. A write is confirmed by `concern` (its
  // namespace's) when given, else by the config's write_concern.
  void send(std::string_view request, ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment,
            bool timed = true, const config::WriteConcern* concern = nullptr);
  // As send(), answered within `limit` instead of timeouts.request_ms (a script).
  void send_within(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                   std::uint32_t fragment, std::chrono::milliseconds limit);
  // Sends a request whose reply Santral drops (the MULTI that opens a pinned transaction).
  void send_silent(std::string_view request);
  // Subscriber and tracking connections: where pushed messages go (deliver with kPushSlot),
  // and who hears when the connection is lost.
  void set_push_sink(ReplySinkPtr sink) { pushes_.set_sink(std::move(sink)); }
  // Runs whenever the connection becomes ready for requests: connected, or taken back after
  // its shard was marked down (router/catalog/ asks the shard what it knows then).
  void set_on_ready(std::function<void()> ready) { on_ready_ = std::move(ready); }

  // After a reload: the shard's place in the new map, and the settings to use from now on
  // (credentials and database apply from the next connection).
  void retarget(std::size_t shard_index, std::string shard_name,
                std::shared_ptr<const config::Config> config);

  // Called periodically by the worker: fails requests and connects that took too long, and
  // PINGs connections that have been idle.
  void check_deadlines(std::chrono::steady_clock::time_point now);

  // Lua scripts this connection has loaded on its server since it connected (LoadedScripts).
  bool has_script(const std::string& sha) const { return scripts_.has(sha); }
  void script_loaded(std::string sha) { scripts_.loaded(std::move(sha)); }
  void script_lost(const std::string& sha) { scripts_.lost(sha); }

  State state() const { return state_; }
  // Up and not marked down: the shard is answering.
  bool up() const { return !health_.ejected() && state_ == State::Up; }
  // Up, or connecting for the first time: requests may be queued to it.
  bool usable() const {
    return !health_.ejected() && (state_ == State::Up || state_ == State::Connecting);
  }
  bool ejected() const { return health_.ejected(); }
  // "up", "connecting" or "down" (a connection marked down is down whatever its state), as
  // INFO, SANTRAL SHARDMAP and the admin pages show it.
  static std::string_view state_name(State state, bool ejected);
  std::string_view state_name() const { return state_name(state_, health_.ejected()); }
  // Up, but the replies to its handshake (HELLO, AUTH, CLIENT TRACKING, SELECT) are not all in.
  bool handshaking() const { return state_ == State::Up && in_flight_.handshaking(); }
  const std::string& down_reason() const { return health_.down_reason(); }
  const BackendTarget& target() const { return target_; }
  // The loop it lives on (its DrainingConnections are that loop's).
  boost::asio::io_context& io() const { return io_; }
  std::size_t in_flight() const { return in_flight_.size() + failover_hold_.size(); }
  // The connection's CLIENT ID on its server, asked in the handshake (0: not known yet, or
  // refused).
  std::uint64_t server_client_id() const { return handshake_.server_client_id(); }

 private:
  // `held`: how long it waited for the shard before (Waiting), for the sink's ShardTiming.
  void enqueue(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
               std::uint32_t fragment, std::chrono::steady_clock::duration limit,
               const config::WriteConcern* concern = nullptr,
               std::chrono::steady_clock::duration held = {});
  void connect();
  void on_connected();
  void handshake();
  void probe();
  // ShardWriter::Owner: its handlers hold the connection as a BackendConnectionPtr would.
  void hold() override { intrusive_ptr_add_ref(this); }
  void let_go() override { intrusive_ptr_release(this); }
  bool writable() const override { return state_ == State::Up; }
  void top_up() override { confirm_writes(); }
  // Requests go out only once the handshake has answered (ShardHandshake holds them until then).
  void writing() override { wrote_ = wrote_ || !handshake_.answering(); }
  void write_failed(const std::string& why, bool counts_as_failure) override;
  void read();
  void on_read(std::size_t bytes);
  bool deliver_frames();
  void fail_all(const std::string& reply);
  // Marked down, or connecting again after a failure (the connect may be refused, and what
  // was queued meanwhile would fail with it).
  bool holds_while_down() const {
    return failover_hold_.holds() && !fence_.waiting() && state_ != State::Stopped &&
           (health_.ejected() || (state_ == State::Connecting && health_.failures() > 0));
  }
  void send_waiting(std::deque<Waiting> waiting);
  void expire_waiting(std::chrono::steady_clock::time_point now);
  void confirm_writes();  // a WAIT behind the writes queued since the last one
  void connection_failed(const std::string& reply, bool counts_as_failure);
  void go_down(const std::string& reason);
  void retry_after(std::chrono::milliseconds wait);
  void fence_lifted();
  // Closes the socket; requests it carried that the shard has not answered are handed to
  // DrainingConnections (`why` says what Santral gave up on).
  void close_socket(std::string_view why);
  std::string address_text() const { return target_.address.text(); }
  std::string& queue() { return handshake_.queue(writer_.outbox()); }

  boost::asio::io_context& io_;
  BackendTarget target_;
  std::shared_ptr<const config::Config> config_;
  ShardStats* stats_;
  ConnectionRole role_;
  Stream stream_;  // TCP, or TLS for a shard with `tls: true`
  ShardDial dial_;
  boost::asio::steady_timer retry_timer_;
  State state_ = State::Connecting;
  std::uint64_t generation_ = 0;  // bumped on every reset; stale handlers compare and bail
  ShardHealth health_;
  ShardHandshake handshake_;
  PushRoute pushes_;
  std::function<void()> on_ready_;
  LoadedScripts scripts_;
  bool drains_ = true;  // Options::drains
  ConnectionFence fence_;
  bool wrote_ = false;  // bytes went to this socket since it connected

  InFlightRequests in_flight_;
  FailoverHold failover_hold_;  // came while down, not sent
  ConfirmedWrites writes_;
  ShardWriter writer_;
  ReplyInbox inbox_;
};

// Connections taken out of service (a removed shard, a pool that is full, a reload): each one
// closes once it has answered everything it was sent (one still connecting has yet to send
// it); until then its deadlines are checked. Called on every worker tick.
void close_answered(std::vector<BackendConnectionPtr>& retired,
                    std::chrono::steady_clock::time_point now);

}  // namespace santral::router
