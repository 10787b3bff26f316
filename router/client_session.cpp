#include "router/client_session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "protocol/errors.h"
#include "router/dispatch.h"
#include "router/worker.h"

namespace santral::router {

namespace asio = boost::asio;
using protocol::ClientError;
using protocol::error_message;

namespace {

constexpr std::size_t kInboxInitial = 2048;
constexpr std::size_t kKeepCapacity = 64 * 1024;  // larger buffers are released when drained

template <typename Buffer>
void release_if_large(Buffer& buffer) {
  if (buffer.capacity() > kKeepCapacity) Buffer().swap(buffer);
}

}  // namespace

ClientSession::ClientSession(Worker& worker, asio::ip::tcp::socket socket, std::uint64_t id)
    : worker_(worker), socket_(std::move(socket)), parser_(worker.config().limits.request) {
  state_.id = id;
  boost::system::error_code ec;
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) state_.peer = remote.address().to_string() + ":" + std::to_string(remote.port());
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  state_.authenticated = worker.config().password.empty();
}

ClientSession::~ClientSession() = default;

void ClientSession::start() {
  inbox_.resize(kInboxInitial);
  read();
}

void ClientSession::close() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
  worker_.forget(*this);
}

void ClientSession::make_room() {
  if (inbox_end_ < inbox_.size()) return;
  if (inbox_start_ > 0) {
    // The parser counts from the request's first byte, so the partial request may move.
    std::copy(inbox_.begin() + static_cast<std::ptrdiff_t>(inbox_start_),
              inbox_.begin() + static_cast<std::ptrdiff_t>(inbox_end_), inbox_.begin());
    inbox_end_ -= inbox_start_;
    inbox_start_ = 0;
  } else {
    inbox_.resize(inbox_.size() * 2);
  }
}

void ClientSession::read() {
  if (reading_ || paused_ || closing_) return;
  make_room();
  reading_ = true;
  socket_.async_read_some(
      asio::buffer(inbox_.data() + inbox_end_, inbox_.size() - inbox_end_),
      [self = boost::intrusive_ptr<ClientSession>(this)](const boost::system::error_code& ec,
                                                         std::size_t bytes) {
        self->on_read(ec, bytes);
      });
}

void ClientSession::on_read(const boost::system::error_code& ec, std::size_t bytes) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    close();
    return;
  }
  inbox_end_ += bytes;
  process_input();
  read();
}

bool ClientSession::over_limits() const {
  const auto& limits = worker_.config().limits;
  return replies_.size() >= limits.max_pending_requests ||
         outbox_.size() + writing_.size() >= limits.max_output_bytes;
}

// Parses and routes every complete request in the inbox, in order.
void ClientSession::process_input() {
  if (processing_) return;
  processing_ = true;
  while (inbox_start_ < inbox_end_ && !closing_) {
    if (over_limits()) {
      paused_ = true;
      break;
    }
    protocol::Request request;
    std::size_t consumed = 0;
    std::string_view input(inbox_.data() + inbox_start_, inbox_end_ - inbox_start_);
    auto status = parser_.parse(input, request, consumed);
    if (status == protocol::ParseStatus::NeedMore) break;
    if (status == protocol::ParseStatus::Error) {
      reply_protocol_error();
      break;
    }
    if (status == protocol::ParseStatus::Complete) dispatch(*this, request);
    inbox_start_ += consumed;
  }
  if (inbox_start_ == inbox_end_) {
    inbox_start_ = inbox_end_ = 0;
    if (inbox_.size() > kKeepCapacity) {
      inbox_.resize(kInboxInitial);
      inbox_.shrink_to_fit();
    }
  }
  processing_ = false;
}

void ClientSession::reply_protocol_error() {
  using protocol::ProtocolError;
  const auto& limits = parser_.limits();
  std::string message;
  switch (parser_.error()) {
    case ProtocolError::InvalidMultibulkLength:
      message = error_message(ClientError::InvalidMultibulkLength);
      break;
    case ProtocolError::TooManyArguments:
      message = error_message(ClientError::TooManyArguments, parser_.announced(), limits.max_args);
      break;
    case ProtocolError::InvalidBulkLength:
      message = error_message(ClientError::InvalidBulkLength);
      break;
    case ProtocolError::BulkTooLarge:
      message = error_message(ClientError::BulkTooLarge, parser_.announced(), limits.max_bulk_bytes);
      break;
    case ProtocolError::ExpectedDollar:
      // Redis prints a space in place of a CR or LF here.
      message = error_message(ClientError::ExpectedDollar,
                              parser_.unexpected_byte() == '\r' || parser_.unexpected_byte() == '\n'
                                  ? ' '
                                  : parser_.unexpected_byte());
      break;
    case ProtocolError::TooBigCountString:
      message = error_message(ClientError::TooBigCountString);
      break;
    case ProtocolError::TooBigBulkCountString:
      message = error_message(ClientError::TooBigBulkCountString);
      break;
    case ProtocolError::TooBigInline:
      message = error_message(ClientError::TooBigInline, limits.max_inline_bytes);
      break;
    case ProtocolError::UnbalancedQuotes:
    case ProtocolError::None:
      message = error_message(ClientError::UnbalancedQuotes);
      break;
  }
  spdlog::debug("client {} ({}): {}; closing the connection", state_.id, state_.peer, message);
  reply_error(message);
  close_after_replies();
}

void ClientSession::reply(std::string_view resp) {
  if (replies_.empty()) {
    outbox_.append(resp);
  } else {
    replies_.complete(replies_.open(), resp);
  }
  schedule_flush();
}

void ClientSession::reply_error(std::string_view message) {
  std::string line;
  line.reserve(message.size() + 3);
  line.append("-").append(message).append("\r\n");
  reply(line);
}

void ClientSession::forward(std::size_t shard, std::string_view request_bytes) {
  auto slot = replies_.open();
  worker_.backend(shard, state_.id).send(request_bytes, this, slot, 0);
}

void ClientSession::close_after_replies() {
  closing_ = true;
  schedule_flush();
}

void ClientSession::deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) {
  if (closed_) return;
  if (replies_.is_simple_head(slot)) {
    outbox_.append(reply);
    replies_.pop_head();
    replies_.drain(outbox_);
  } else if (replies_.fill(slot, fragment, reply)) {
    replies_.drain(outbox_);
  }
  // With nothing else outstanding no other reply can join this write, so it need not wait for
  // the end of the loop turn.
  if (replies_.empty() && !processing_) {
    flush();
  } else {
    schedule_flush();
  }
  resume_if_drained();
}

void ClientSession::resume_if_drained() {
  if (!paused_ || over_limits()) return;
  paused_ = false;
  process_input();
  read();
}

void ClientSession::schedule_flush() {
  if (flush_posted_ || write_in_flight_ || closed_) return;
  flush_posted_ = true;
  asio::post(socket_.get_executor(), [self = boost::intrusive_ptr<ClientSession>(this)] {
    self->flush_posted_ = false;
    self->flush();
  });
}

void ClientSession::flush() {
  if (write_in_flight_ || closed_) return;
  if (outbox_.empty()) {
    if (closing_ && replies_.empty()) close();
    return;
  }
  writing_.swap(outbox_);
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = boost::intrusive_ptr<ClientSession>(this)](
                        const boost::system::error_code& ec, std::size_t) { self->on_written(ec); });
}

void ClientSession::on_written(const boost::system::error_code& ec) {
  write_in_flight_ = false;
  writing_.clear();
  release_if_large(writing_);
  if (closed_) return;
  if (ec) {
    close();
    return;
  }
  flush();
  resume_if_drained();
}

}  // namespace santral::router
