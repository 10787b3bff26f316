#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/devector.hpp>
#include <boost/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

#include "config/config.h"
#include "protocol/reply_scanner.h"
#include "router/backend/failover_hold.h"
#include "router/backend/reply_sink.h"
#include "router/backend/write_concern.h"
#include "router/metrics/stats.h"
#include "router/transport/stream.h"

namespace santral::router {

// What kind of client a connection serves: the database it has SELECTed and the RESP version
// it speaks (HELLO 3 makes the shard itself produce RESP3, so replies need no conversion).
struct ConnectionProfile {
  int database = 0;
  int protocol = 2;
  bool operator==(const ConnectionProfile&) const = default;
};

struct BackendTarget {
  std::size_t shard_index = 0;
  std::string shard_name;  // for messages: "shard0", or "shard0 replica 127.0.0.1:7101"
  config::Endpoint address;
  ConnectionProfile profile;
};

enum class ConnectionRole {
  Shared,      // pipelined for all of a worker's clients; reconnects by itself
  Dedicated,   // lent to one client at a time (transactions, blocking commands); never
               // reconnects, because a new connection would silently lose MULTI or WATCH state
  Subscriber,  // one client's pub/sub connection: messages are pushed to the client
  Tracking,    // RESP3 with CLIENT TRACKING ON (a near-cache connection, a client-tracking
               // lane); reconnects like a shared one; invalidations go to the push sink, which
               // also hears (connection_lost) whenever the connection, and so the tracking, is lost
  TrackingBroadcast,  // the same with BCAST: pushes for every key written on the shard
};

class BackendConnection;
using BackendConnectionPtr = boost::intrusive_ptr<BackendConnection>;

// One connection from a worker to a shard. Requests are written back to back; replies come
// back in the same order, so the oldest in-flight request owns the next reply. Everything
// queued in one event-loop turn leaves in one write.
//
// Failure handling (shared connections):
//   - a request not answered within timeouts.request fails, and the connection is dropped
//     and reopened so that its late reply can never reach a later request;
//   - an idle connection is PINGed every health.interval, and that PING counts like a request;
//   - health.failures failures in a row, or a refused connection, mark the shard down
//     (ejected): its requests fail at once with the reason instead of waiting out timeouts;
//   - a down shard is retried in the background with exponential backoff, and taken back
//     only when a PING on the new connection is answered.
//
// Write concern (config::WriteConcern, on shared and lent connections): behind each batch of
// writes one `WAIT <replicas> <timeout_ms>` goes down the same connection; the writes' replies
// are held until it answers, then delivered as they came, or replaced by a NOREPLICAS error
// when fewer replicas confirmed. Replies to other requests are not held (a request queued
// behind the WAIT waits for it on the shard, as Redis runs one connection's commands in order).
//
//   Connecting --connected--> Up --N failures--> Down --retry--> Connecting --PONG--> Up
//                                                  ^------------ no PONG ----------'
class BackendConnection
    : public boost::intrusive_ref_counter<BackendConnection, boost::thread_unsafe_counter> {
 public:
  enum class State { Connecting, Up, Down, Stopped };
  // deliver()'s slot for a pub/sub message pushed by a Subscriber connection.
  static constexpr std::uint64_t kPushSlot = std::numeric_limits<std::uint64_t>::max();

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
  void set_push_sink(ReplySinkPtr sink) { push_sink_ = std::move(sink); }
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

  // Lua scripts this connection has loaded on its server since it connected (SCRIPT LOAD
  // ahead of an EVALSHA keeps the EVALSHA in its place in the pipeline).
  bool has_script(const std::string& sha) const { return scripts_.contains(sha); }
  void script_loaded(std::string sha) { scripts_.insert(std::move(sha)); }
  void script_lost(const std::string& sha) { scripts_.erase(sha); }

  State state() const { return state_; }
  // Up and not marked down: the shard is answering.
  bool up() const { return !ejected_ && state_ == State::Up; }
  // Up, or connecting for the first time: requests may be queued to it.
  bool usable() const { return !ejected_ && (state_ == State::Up || state_ == State::Connecting); }
  bool ejected() const { return ejected_; }
  // "up", "connecting" or "down" (a connection marked down is down whatever its state), as
  // INFO, SANTRAL SHARDMAP and the admin pages show it.
  static std::string_view state_name(State state, bool ejected);
  std::string_view state_name() const { return state_name(state_, ejected_); }
  // Up, but the replies to its handshake (HELLO, AUTH, CLIENT TRACKING, SELECT) are not all in.
  bool handshaking() const {
    return state_ == State::Up && !pending_.empty() &&
           (pending_.front().owner == Owner::Handshake ||
            pending_.front().owner == Owner::ClientId);
  }
  const std::string& down_reason() const { return down_reason_; }
  const BackendTarget& target() const { return target_; }
  // The loop it lives on (its DrainingConnections are that loop's).
  boost::asio::io_context& io() const { return io_; }
  std::size_t in_flight() const { return pending_.size() + failover_hold_.size(); }
  // The connection's CLIENT ID on its server, asked in the handshake (0: not known yet, or
  // refused).
  std::uint64_t server_client_id() const { return server_client_id_; }

 private:
  void start();
  // Instead of start(): requests fail at once with `reason`.
  void mark_down(const std::string& reason);

  // ClientWrite: a client's write, its reply held for the WriteConcern (a WAIT) behind it.
  enum class Owner : std::uint8_t {
    Client,
    ClientWrite,
    WriteConcern,
    Handshake,
    Silent,
    Probe,
    Naming,
    ClientId
  };
  struct HeldReply {
    ReplySinkPtr sink;
    std::uint64_t slot;
    std::uint32_t fragment;
    std::string frame;
    config::WriteConcern concern;  // what the write asked for
  };
  struct Pending {
    ReplySinkPtr sink;
    std::uint64_t slot;
    std::uint32_t fragment;
    Owner owner;
    std::chrono::steady_clock::time_point sent;
    std::chrono::steady_clock::time_point deadline;
    config::WriteConcern concern{};              // a ClientWrite's
    std::chrono::steady_clock::duration held{};  // waiting for a failover before it was sent
  };

  // `held`: how long it waited for the shard before (Waiting), for the sink's ShardTiming.
  void enqueue(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
               std::uint32_t fragment, std::chrono::steady_clock::duration limit,
               const config::WriteConcern* concern = nullptr,
               std::chrono::steady_clock::duration held = {});
  // Tells `sink` where the time of (`slot`, `fragment`) went here, before its reply.
  void tell_timing(ReplySink& sink, std::uint64_t slot, std::uint32_t fragment,
                   std::chrono::steady_clock::duration held,
                   std::chrono::steady_clock::duration waited) const;
  void connect();
  void start_tls();
  void on_connected();
  void handshake();
  void handshake_refused(std::string_view frame);
  void handshake_answered();  // one handshake command answered OK
  void probe();
  void schedule_flush();
  void flush();
  void write_tls(boost::asio::const_buffer chunk);
  void write_failed(boost::system::error_code ec);
  void read();
  void on_read(std::size_t bytes);
  bool deliver_frames();
  bool is_push(std::string_view frame) const;
  void fail_all(const std::string& reply);
  // Marked down, or connecting again after a failure (the connect may be refused, and what
  // was queued meanwhile would fail with it).
  bool holds_while_down() const {
    return failover_hold_.holds() && !fence_wait_ && state_ != State::Stopped &&
           (ejected_ || (state_ == State::Connecting && failures_ > 0));
  }
  void release_waiting();
  void expire_waiting(std::chrono::steady_clock::time_point now);
  bool confirms_writes() const {
    return confirms_ && (role_ == ConnectionRole::Shared || role_ == ConnectionRole::Dedicated);
  }
  void confirm_writes();  // a WAIT behind the writes queued since the last one
  void writes_confirmed(std::string_view frame);
  void connection_failed(const std::string& reply, bool counts_as_failure);
  void go_down(const std::string& reason);
  void fence_lifted();
  void tracking_lost();
  // Closes the socket; requests it carried that the shard has not answered are handed to
  // DrainingConnections (`why` says what Santral gave up on).
  void close_socket(std::string_view why);
  bool carries_requests() const;
  std::string address_text() const { return target_.address.text(); }
  bool tracks() const {
    return role_ == ConnectionRole::Tracking || role_ == ConnectionRole::TrackingBroadcast;
  }

  boost::asio::io_context& io_;
  BackendTarget target_;
  std::shared_ptr<const config::Config> config_;
  ShardStats* stats_;
  ConnectionRole role_;
  Stream stream_;  // TCP, or TLS for a shard with `tls: true`
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer retry_timer_;
  State state_ = State::Connecting;
  bool ejected_ = false;          // marked down; traffic only after a PING is answered
  bool fence_wait_ = false;       // closed by the write fence; connects again once it lifts
  std::uint32_t failures_ = 0;    // in a row
  std::uint64_t generation_ = 0;  // bumped on every reset; stale handlers compare and bail
  std::chrono::steady_clock::time_point connect_started_;
  std::chrono::steady_clock::time_point last_reply_;
  std::chrono::milliseconds backoff_{0};
  std::string down_reason_;
  ReplySinkPtr push_sink_;
  std::function<void()> on_ready_;
  std::unordered_set<std::string> scripts_;
  std::uint64_t server_client_id_ = 0;
  bool drains_ = true;  // Options::drains
  bool wrote_ = false;  // bytes went to this socket since it connected

  // A devector: it reuses its room as replies come in (a deque allocates a block every few
  // requests as it slides).
  boost::container::devector<Pending> pending_;
  FailoverHold failover_hold_;  // came while down, not sent
  WriteConcernTracker writes_;
  bool confirms_ = false;            // config_->confirms_writes()
  bool unconfirmed_writes_ = false;  // queued since the last WAIT
  config::WriteConcern batch_{0,
                              std::chrono::milliseconds(0)};  // the WAIT for them: the most asked
  std::vector<HeldReply> awaiting_;  // answered writes waiting for their WAIT
  std::string outbox_;               // queued, not yet handed to the socket
  // Queued while the handshake is unanswered: sent only once every handshake command has
  // answered OK (a request behind a refused AUTH would run as Redis's `default` user).
  std::string held_;
  std::size_t handshake_left_ = 0;
  std::string& queue() { return handshake_left_ > 0 ? held_ : outbox_; }
  std::string writing_;  // handed to the socket, written up to written_
  std::size_t written_ = 0;
  // One write system call at most this much: the fence is checked between two.
  static constexpr std::size_t kMaxWrite = 256 * 1024;
  bool write_in_flight_ = false;
  bool flush_posted_ = false;

  std::vector<char> inbox_;
  std::size_t inbox_start_ = 0;  // first byte of the frame being scanned
  std::size_t inbox_end_ = 0;
  protocol::ReplyScanner scanner_;
};

// Connections taken out of service (a removed shard, a pool that is full, a reload): each one
// closes once it has answered everything it was sent (one still connecting has yet to send
// it); until then its deadlines are checked. Called on every worker tick.
void close_answered(std::vector<BackendConnectionPtr>& retired,
                    std::chrono::steady_clock::time_point now);

}  // namespace santral::router
