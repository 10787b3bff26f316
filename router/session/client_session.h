#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "router/backend/reply_sink.h"
#include "router/merge/reply_merge.h"
#include "router/session/reply_queue.h"
#include "router/session/session_input.h"
#include "router/transport/readiness_loop.h"
#include "router/transport/stream.h"

namespace santral::router {

class Client;

// The client's connection: reads its bytes (TCP or TLS), parses them into requests and hands
// each to its Client (router/session/client.h), keeps the replies in request order and
// writes them back, and holds the client to its limits (pending requests, output and input
// bytes, the query buffer). It knows nothing of what a request means.
//
//   socket --read--> SessionInput --parse--> Client::handle --> routes ... backends
//   socket <--write-- outbox <--drain-- ReplyQueue <--fill(slot, fragment)-- Client::deliver
//
// A plain connection's socket leaves Asio for its worker's readiness loop
// (router/transport/readiness_loop.h): it is read when bytes arrive, until a short read, and
// written at once, the rest when room appears; a TLS connection reads and writes through Asio.
//
// It is a part of its Client, which is reference-counted: the readiness loop's watch, every
// read, write and posted flush hold the Client, so neither goes while the socket is open.
class ClientSession final : private ReadinessLoop::Watcher {
 public:
  // `tls`: accepted on the TLS listener; the handshake comes first.
  ClientSession(Client& client, boost::asio::ip::tcp::socket socket, bool tls);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  void start();
  // A connection that has read nothing since the last call and owes no reply gives its input
  // buffer back to the worker and waits for readability without one (Worker's sweep).
  void park_if_idle();
  // Shutting down: read nothing more, answer what was read, then close.
  void stop_after_input();
  // Closes the socket (Client::close says what else goes with it); false when it was closed.
  bool shut();
  bool closed() const { return closed_; }
  // Still in its TLS handshake.
  bool handshaking() const { return handshaking_; }
  // Input read but not yet parsed into requests (the partial request a slow client holds).
  std::size_t buffered_input() const { return input_ ? input_->end - input_->start : 0; }
  // limits.max_input_bytes_total: no more reads until resume_reading(), to let others go first.
  void stop_reading() { starved_ = true; }
  void resume_reading();
  bool reading_stopped() const { return starved_; }
  // users[].limits.wait_ms: no more parsing or reading for `how_long` (the request being
  // handled, left in the inbox, waits for its user's token; or a refused client's next one).
  void hold(std::chrono::nanoseconds how_long);
  // The buffer, parser and plan of the request being handled.
  SessionInput& input();

  // --- reply order ---
  // Opens the next reply slot for `request`; `silent`: its reply is not written.
  std::uint64_t open(std::uint32_t fragments, std::unique_ptr<ReplyMerge> merge,
                     const SlotRequest& request, bool silent);
  // A whole reply known now: written at once when nothing is owed before it (nullopt), else
  // put in a new slot, whose id is returned.
  std::optional<std::uint64_t> answer(std::string_view resp, const SlotRequest& request);
  // A part of `slot`'s reply arrived; the replies now at the head move to the output. Then
  // send_replies() writes them.
  void fill(std::uint64_t slot, std::uint32_t fragment, std::string_view reply);
  void send_replies();
  // A pub/sub message (or anything else unasked for), in order with the replies; false when
  // the client reads too slowly and must be closed.
  bool push(std::string_view frame);
  // Some reply may come from a RESP3 lane for this RESP2 client (SlotRequest::resp2).
  void downgrade_replies() { downgrades_replies_ = true; }
  // After the replies owed now are written, close the connection.
  void close_after_replies();
  bool closing() const { return closing_; }
  // Owes no reply; `next_reply()`: the id of the oldest slot still owed.
  bool owes_nothing() const { return replies_.empty(); }
  std::size_t replies_owed() const { return replies_.size(); }
  std::uint64_t next_reply() const { return replies_.head_id(); }

  // CLIENT LIST's figures of this connection.
  struct Buffers {
    int fd = -1;
    std::size_t query = 0;       // qbuf
    std::size_t query_free = 0;  // qbuf-free
    std::size_t replies = 0;     // oll
    std::size_t output = 0;      // omem
    std::size_t memory = 0;      // tot-mem
  };
  Buffers buffers();
  // The request `slot` was opened for, while it is queued (nullptr once it left).
  SlotRequest* slot_request(std::uint64_t slot) { return replies_.request(slot); }

 private:
  void answered(const SlotRequest& request, bool error);
  void on_handshake(const boost::system::error_code& ec);
  bool plain() const { return fd_ >= 0; }
  void watch_socket();
  void on_ready(std::uint32_t events) override;
  void read();
  bool may_read() const;
  void read_ready();
  void read_into_buffer();
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  void received(std::size_t bytes);
  bool parkable() const;
  void park_if_parkable();
  void give_back_input();
  void process_input();
  void input_counted();
  bool over_query_buffer();
  bool over_limits() const;
  void resume_if_drained();
  void schedule_flush();
  void flush();
  void send_ready();
  void on_written(const boost::system::error_code& ec);
  bool done_draining() const;

  Client& client_;
  Stream stream_;  // TLS for a client of the TLS listener; a plain one's socket is fd_
  int fd_ = -1;    // a plain connection's socket, watched by the worker's readiness loop
  ReadinessLoop::Token watch_ = 0;  // the readiness loop holds the client until shut()
  bool readable_ = false;           // plain: an edge came and no short read since

  std::unique_ptr<SessionInput> input_;  // none while there is nothing to read or parse

  ReplyQueue replies_;
  std::string outbox_;
  std::string writing_;
  std::size_t written_ = 0;  // plain: how much of writing_ the socket took
  bool write_in_flight_ = false;
  bool flush_posted_ = false;

  bool reading_ = false;  // TLS: a read is in flight
  bool read_since_sweep_ = false;
  bool processing_ = false;
  bool paused_ = false;          // backpressure: too much in flight or buffered
  bool waiting_ = false;         // a request waits for every earlier reply first (WAIT)
  bool held_ = false;            // hold(): until hold_timer_ ends
  bool closing_ = false;         // no more requests; close once every reply is written
  bool draining_input_ = false;  // shutting down: no more reads, but what was read is answered
  bool closed_ = false;
  // Some reply slot of this client may hold a RESP3 lane's reply for a RESP2 client
  // (SlotRequest::resp2); until then fill() does not look.
  bool downgrades_replies_ = false;
  bool handshaking_ = false;       // TLS: the handshake is not done yet
  bool starved_ = false;           // limits.max_input_bytes_total: reads wait for the others
  std::size_t counted_input_ = 0;  // this session's part of its worker's buffered input
  std::unique_ptr<boost::asio::steady_timer> hold_timer_;  // made at the first hold()
};

}  // namespace santral::router
