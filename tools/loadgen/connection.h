#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include "tools/loadgen/schedule.h"

namespace santral::loadgen {

// What a connection tells the run.
struct ConnectionEvents {
  // One reply, matched in order with the request it answers (intended: that request's
  // scheduled send time; arrived: when the read that completed it returned).
  // tag: what the run gave queued() with that request.
  std::function<void(Clock::time_point intended, Clock::time_point arrived, bool error,
                     std::string_view reply, std::uint64_t tag)>
      on_reply;
  // The connection cannot go on (a read or write failed, the peer closed, a reply was not RESP
  // or answered no request).
  std::function<void(std::string_view what)> on_failure;
};

// One pipelined connection: requests queued between two writes leave in one write, however many
// replies are still outstanding; replies are matched FIFO with their requests' intended times.
//
//   queue() -> pending_ --flush()--> writing_ --async_write--> socket
//   socket --async_read_some--> read buffer --scan_reply--> in_flight_.front() -> on_reply
class Connection {
 public:
  Connection(boost::asio::io_context& io, int index, ConnectionEvents events);

  void connect(const boost::asio::ip::tcp::resolver::results_type& endpoints,
               boost::system::error_code& ec);
  // AUTH user password, before any request: "" when the server said OK, else why not.
  std::string login(const std::string& user, const std::string& password);
  void start_reading();
  // Adds a request (its bytes already appended to pending()) with its intended send time and a
  // tag handed back with its reply.
  std::string& pending() { return pending_; }
  void queued(Clock::time_point intended, bool measured, std::uint64_t tag = 0);
  // Starts writing what is pending unless a write is already under way (it then follows that).
  void flush();
  void close();

  std::uint64_t sent() const { return sent_; }  // requests whose write completed
  std::uint64_t sent_measured() const { return sent_measured_; }
  std::size_t outstanding() const { return in_flight_.size(); }

 private:
  void on_written(const boost::system::error_code& ec);
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  void fail(std::string_view what);

  boost::asio::ip::tcp::socket socket_;
  int index_;
  ConnectionEvents events_;
  bool closed_ = false;

  std::string pending_;
  std::uint64_t pending_requests_ = 0, pending_measured_ = 0;
  std::string writing_;
  std::uint64_t writing_requests_ = 0, writing_measured_ = 0;
  bool write_under_way_ = false;
  std::uint64_t sent_ = 0, sent_measured_ = 0;

  struct InFlight {
    Clock::time_point intended;
    std::uint64_t tag;
  };
  std::deque<InFlight> in_flight_;  // intended send times and tags, oldest first
  std::vector<char> read_buffer_;
  std::size_t read_begin_ = 0, read_end_ = 0;
};

}  // namespace santral::loadgen
