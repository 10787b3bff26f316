#include "tools/loadgen/connection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "tools/loadgen/reply_scanner.h"

namespace santral::loadgen {

namespace asio = boost::asio;

Connection::Connection(asio::io_context& io, int index, ConnectionEvents events)
    : socket_(io), index_(index), events_(std::move(events)), read_buffer_(64 * 1024) {}

void Connection::connect(const asio::ip::tcp::resolver::results_type& endpoints,
                         boost::system::error_code& ec) {
  asio::connect(socket_, endpoints, ec);
  if (!ec) socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

std::string Connection::login(const std::string& user, const std::string& password) {
  std::string auth = fmt::format("*3\r\n$4\r\nAUTH\r\n${}\r\n{}\r\n${}\r\n{}\r\n", user.size(),
                                 user, password.size(), password);
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(auth), ec);
  if (ec) return "cannot send AUTH: " + ec.message();
  std::string answer;
  char c = 0;
  while (!answer.ends_with("\r\n")) {
    asio::read(socket_, asio::buffer(&c, 1), ec);
    if (ec) return "no answer to AUTH: " + ec.message();
    answer += c;
  }
  return answer == "+OK\r\n" ? "" : "AUTH refused: " + answer.substr(0, answer.size() - 2);
}

void Connection::start_reading() {
  socket_.async_read_some(
      asio::buffer(read_buffer_.data() + read_end_, read_buffer_.size() - read_end_),
      [this](const boost::system::error_code& ec, std::size_t bytes) { on_read(ec, bytes); });
}

void Connection::queued(Clock::time_point intended, bool measured, std::uint64_t tag) {
  in_flight_.push_back({intended, tag});
  ++pending_requests_;
  if (measured) ++pending_measured_;
}

void Connection::flush() {
  if (write_under_way_ || pending_.empty() || closed_) return;
  std::swap(pending_, writing_);
  writing_requests_ = std::exchange(pending_requests_, 0);
  writing_measured_ = std::exchange(pending_measured_, 0);
  write_under_way_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [this](const boost::system::error_code& ec, std::size_t) { on_written(ec); });
}

void Connection::on_written(const boost::system::error_code& ec) {
  write_under_way_ = false;
  if (closed_) return;
  if (ec) return fail(fmt::format("write failed: {}", ec.message()));
  sent_ += writing_requests_;
  sent_measured_ += writing_measured_;
  writing_.clear();
  flush();
}

void Connection::on_read(const boost::system::error_code& ec, std::size_t bytes) {
  if (closed_) return;
  if (ec == asio::error::eof) return fail("the server closed the connection");
  if (ec) return fail(fmt::format("read failed: {}", ec.message()));
  const auto arrived = Clock::now();
  read_end_ += bytes;
  while (read_begin_ < read_end_) {
    const std::string_view unread(read_buffer_.data() + read_begin_, read_end_ - read_begin_);
    const auto reply = scan_reply(unread);
    if (reply.status == ScanStatus::NeedMore) break;
    if (reply.status == ScanStatus::Malformed)
      return fail(fmt::format("not a RESP reply: {:?}", unread.substr(0, 40)));
    if (in_flight_.empty())
      return fail(fmt::format("a reply that answers no request: {:?}", unread.substr(0, 40)));
    const auto request = in_flight_.front();
    in_flight_.pop_front();
    read_begin_ += reply.size;
    events_.on_reply(request.intended, arrived, reply.error, unread.substr(0, reply.size),
                     request.tag);
    if (closed_) return;  // that reply finished the run
  }
  // Keep the unread start of a reply at the front; grow only for a reply bigger than the buffer.
  const std::size_t unread = read_end_ - read_begin_;
  std::memmove(read_buffer_.data(), read_buffer_.data() + read_begin_, unread);
  read_begin_ = 0;
  read_end_ = unread;
  if (read_end_ == read_buffer_.size()) read_buffer_.resize(read_buffer_.size() * 2);
  start_reading();
}

void Connection::fail(std::string_view what) {
  const auto message = fmt::format("connection {}: {}", index_, what);
  events_.on_failure(message);
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
}

}  // namespace santral::loadgen
