#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"
#include "protocol/reply_scanner.h"
#include "router/reply_sink.h"

namespace santral::router {

// Which shard a connection serves and how it behaves; shared by all connections of a worker.
struct BackendTarget {
  std::size_t shard_index;
  std::string shard_name;
  config::Endpoint address;
};

// One pipelined connection from a worker to a shard. Requests from many clients are written
// back to back; replies come back in the same order, so the oldest in-flight request owns the
// next reply. Everything queued in one event-loop turn leaves in one write.
//
// Failure handling: a request that is not answered within timeouts.request fails, and the
// connection is dropped and reopened so that its late reply can never reach a later request.
// A connection that cannot connect is Down: requests fail at once with the reason, and it
// retries in the background with exponential backoff.
class BackendConnection {
 public:
  enum class State { Connecting, Up, Down, Stopped };

  BackendConnection(boost::asio::io_context& io, BackendTarget target,
                    const config::Config& config);
  BackendConnection(const BackendConnection&) = delete;
  BackendConnection& operator=(const BackendConnection&) = delete;

  void start();
  void stop();

  // Sends one request (complete RESP bytes). Its reply goes to sink->deliver(slot, fragment)
  // later, or at once if the shard is down.
  void send(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
            std::uint32_t fragment);

  // Called periodically by the worker: fails requests and connects that took too long.
  void check_deadlines(std::chrono::steady_clock::time_point now);

  State state() const { return state_; }
  const BackendTarget& target() const { return target_; }
  std::size_t in_flight() const { return pending_.size(); }

 private:
  struct Pending {
    ReplySinkPtr sink;  // null for Santral's own handshake commands (AUTH, SELECT)
    std::uint64_t slot;
    std::uint32_t fragment;
    std::chrono::steady_clock::time_point sent;
  };

  void connect();
  void on_connected();
  void handshake();
  void schedule_flush();
  void flush();
  void read();
  void on_read(std::size_t bytes);
  bool deliver_frames();
  void fail_all(const std::string& reply);
  void reset(const std::string& reply, bool reconnect_now);
  void go_down(const std::string& reason);
  std::string address_text() const { return target_.address.text(); }

  boost::asio::io_context& io_;
  BackendTarget target_;
  const config::Config& config_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer retry_timer_;
  State state_ = State::Connecting;
  std::uint64_t generation_ = 0;  // bumped on every reset; stale handlers compare and bail
  std::chrono::steady_clock::time_point connect_started_;
  std::chrono::milliseconds backoff_{0};
  std::string down_reason_;

  std::deque<Pending> pending_;
  std::string outbox_;   // queued, not yet handed to the socket
  std::string writing_;  // handed to the socket, write in progress
  bool write_in_flight_ = false;
  bool flush_posted_ = false;

  std::vector<char> inbox_;
  std::size_t inbox_start_ = 0;  // first byte of the frame being scanned
  std::size_t inbox_end_ = 0;
  protocol::ReplyScanner scanner_;
};

}  // namespace santral::router
