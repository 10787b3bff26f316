#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "protocol/request_parser.h"
#include "router/client_state.h"
#include "router/reply_queue.h"
#include "router/reply_sink.h"

namespace santral::router {

class Worker;

// One client connection: reads its requests, routes each through the command table, and
// writes the replies back in request order. Lives on one worker thread.
class ClientSession final : public ReplySink {
 public:
  ClientSession(Worker& worker, boost::asio::ip::tcp::socket socket, std::uint64_t id);
  ~ClientSession() override;

  void start();
  // Closes the connection now; replies still owed by backends are dropped when they arrive.
  void close();

  // ReplySink: a backend's reply to one of this client's requests.
  void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) override;

  // --- used by the routing strategies while the current request is handled ---
  Worker& worker() { return worker_; }
  ClientState& state() { return state_; }
  // Answers the current request with complete RESP bytes.
  void reply(std::string_view resp);
  // Answers the current request with an error (message without '-' and CRLF).
  void reply_error(std::string_view message);
  // Sends the current request's bytes to shard `shard`; the reply comes back through deliver().
  void forward(std::size_t shard, std::string_view request_bytes);
  // After the current reply is written, close the connection (QUIT, protocol errors).
  void close_after_replies();
  std::vector<std::uint32_t>& key_positions() { return key_positions_; }
  std::string& scratch() { return scratch_; }

 private:
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  void process_input();
  void handle(const protocol::Request& request);
  void reply_protocol_error();
  bool over_limits() const;
  void resume_if_drained();
  void schedule_flush();
  void flush();
  void on_written(const boost::system::error_code& ec);
  void make_room();

  Worker& worker_;
  boost::asio::ip::tcp::socket socket_;
  ClientState state_;

  std::vector<char> inbox_;
  std::size_t inbox_start_ = 0;  // first byte of the request being parsed
  std::size_t inbox_end_ = 0;
  protocol::RequestParser parser_;

  ReplyQueue replies_;
  std::string outbox_;
  std::string writing_;
  bool write_in_flight_ = false;
  bool flush_posted_ = false;

  bool reading_ = false;
  bool processing_ = false;
  bool paused_ = false;   // backpressure: too much in flight or buffered
  bool closing_ = false;  // no more requests; close once every reply is written
  bool closed_ = false;

  std::vector<std::uint32_t> key_positions_;
  std::string scratch_;
};

}  // namespace santral::router
