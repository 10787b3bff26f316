#include "router/backend_connection.h"

#include <algorithm>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace asio = boost::asio;
using asio::ip::tcp;
using protocol::ClientError;
using protocol::error_message;

namespace {

constexpr std::size_t kInboxInitial = 16 * 1024;

std::string as_reply(const std::string& message) { return "-" + message + "\r\n"; }

}  // namespace

BackendConnection::BackendConnection(asio::io_context& io, BackendTarget target,
                                     const config::Config& config)
    : io_(io),
      target_(std::move(target)),
      config_(config),
      socket_(io),
      resolver_(io),
      retry_timer_(io),
      inbox_(kInboxInitial) {}

void BackendConnection::start() { connect(); }

void BackendConnection::stop() {
  state_ = State::Stopped;
  ++generation_;
  boost::system::error_code ignored;
  socket_.close(ignored);
  resolver_.cancel();
  retry_timer_.cancel();
  fail_all(as_reply(error_message(ClientError::ShuttingDown)));
}

void BackendConnection::connect() {
  state_ = State::Connecting;
  connect_started_ = std::chrono::steady_clock::now();
  auto generation = ++generation_;
  resolver_.async_resolve(
      target_.address.host, std::to_string(target_.address.port),
      [this, generation](boost::system::error_code ec, tcp::resolver::results_type results) {
        if (generation != generation_) return;
        if (ec) {
          go_down("cannot resolve " + target_.address.host + ": " + ec.message());
          return;
        }
        asio::async_connect(socket_, results,
                            [this, generation](boost::system::error_code ec, const tcp::endpoint&) {
                              if (generation != generation_) return;
                              if (ec) {
                                go_down(ec.message());
                                return;
                              }
                              on_connected();
                            });
      });
}

void BackendConnection::on_connected() {
  boost::system::error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);
  socket_.set_option(asio::socket_base::keep_alive(true), ignored);
  bool was_down = !down_reason_.empty();
  state_ = State::Up;
  backoff_ = std::chrono::milliseconds(0);
  if (was_down) {
    spdlog::info("shard '{}' ({}) is up again", target_.shard_name, address_text());
    down_reason_.clear();
  }
  handshake();
  inbox_start_ = inbox_end_ = 0;
  scanner_.reset();
  read();
  schedule_flush();
}

// AUTH and SELECT go first on every new connection; their replies are checked, not forwarded.
void BackendConnection::handshake() {
  const auto& backend = config_.backend;
  std::string prefix;
  protocol::RespWriter writer(prefix);
  std::size_t commands = 0;
  if (!backend.password.empty()) {
    if (backend.username.empty()) {
      std::string_view args[] = {"AUTH", backend.password};
      writer.command(args);
    } else {
      std::string_view args[] = {"AUTH", backend.username, backend.password};
      writer.command(args);
    }
    ++commands;
  }
  if (backend.database != 0) {
    std::string db = std::to_string(backend.database);
    std::string_view args[] = {"SELECT", db};
    writer.command(args);
    ++commands;
  }
  auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < commands; ++i) pending_.push_front({nullptr, 0, 0, now});
  outbox_.insert(0, prefix);
}

void BackendConnection::send(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                             std::uint32_t fragment) {
  if (state_ == State::Down || state_ == State::Stopped) {
    std::string reply =
        state_ == State::Stopped
            ? as_reply(error_message(ClientError::ShuttingDown))
            : as_reply(error_message(ClientError::ShardUnavailable, target_.shard_name,
                                     address_text(), down_reason_));
    sink->deliver(slot, fragment, reply);
    return;
  }
  outbox_.append(request);
  pending_.push_back({std::move(sink), slot, fragment, std::chrono::steady_clock::now()});
  if (state_ == State::Up) schedule_flush();
}

// Defers the write to the end of this event-loop turn, so that every request queued by every
// client in the turn leaves in one write.
void BackendConnection::schedule_flush() {
  if (flush_posted_ || write_in_flight_) return;
  flush_posted_ = true;
  asio::post(io_, [this, generation = generation_] {
    flush_posted_ = false;
    if (generation == generation_) flush();
  });
}

void BackendConnection::flush() {
  if (write_in_flight_ || outbox_.empty() || state_ != State::Up) return;
  writing_.swap(outbox_);
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [this, generation = generation_](boost::system::error_code ec, std::size_t) {
                      if (generation != generation_) return;
                      write_in_flight_ = false;
                      writing_.clear();
                      if (ec) {
                        reset(as_reply(error_message(ClientError::ShardConnectionLost,
                                                     target_.shard_name, address_text(),
                                                     ec.message())),
                              true);
                        return;
                      }
                      flush();
                    });
}

void BackendConnection::read() {
  if (inbox_end_ == inbox_.size()) {
    if (inbox_start_ > 0) {
      // Keep the unfinished frame, drop what was delivered; the scanner counts from the
      // frame's start, so moving it is safe.
      std::copy(inbox_.begin() + static_cast<std::ptrdiff_t>(inbox_start_),
                inbox_.begin() + static_cast<std::ptrdiff_t>(inbox_end_), inbox_.begin());
      inbox_end_ -= inbox_start_;
      inbox_start_ = 0;
    } else {
      inbox_.resize(inbox_.size() * 2);
    }
  }
  socket_.async_read_some(
      asio::buffer(inbox_.data() + inbox_end_, inbox_.size() - inbox_end_),
      [this, generation = generation_](boost::system::error_code ec, std::size_t bytes) {
        if (generation != generation_) return;
        if (ec) {
          std::string why = ec == asio::error::eof ? "the shard closed the connection" : ec.message();
          reset(as_reply(error_message(ClientError::ShardConnectionLost, target_.shard_name,
                                       address_text(), why)),
                true);
          return;
        }
        on_read(bytes);
      });
}

void BackendConnection::on_read(std::size_t bytes) {
  inbox_end_ += bytes;
  if (!deliver_frames()) return;
  if (inbox_start_ == inbox_end_) {
    inbox_start_ = inbox_end_ = 0;
    if (inbox_.size() > 4 * kInboxInitial) {
      inbox_.resize(kInboxInitial);
      inbox_.shrink_to_fit();
    }
  }
  read();
}

// Hands every complete reply in the inbox to the request that owns it. False when the
// connection had to be reset.
bool BackendConnection::deliver_frames() {
  auto generation = generation_;
  while (inbox_start_ < inbox_end_) {
    std::size_t size = 0;
    std::string_view input(inbox_.data() + inbox_start_, inbox_end_ - inbox_start_);
    auto status = scanner_.scan(input, size);
    if (status == protocol::ScanStatus::NeedMore) return true;
    if (status == protocol::ScanStatus::Error || pending_.empty()) {
      spdlog::error("shard '{}' ({}) sent {}; resetting the connection", target_.shard_name,
                    address_text(),
                    status == protocol::ScanStatus::Error ? "bytes that are not RESP"
                                                          : "a reply nobody asked for");
      reset(as_reply(error_message(ClientError::ShardProtocolError, target_.shard_name,
                                   address_text())),
            true);
      return false;
    }
    std::string_view frame = input.substr(0, size);
    inbox_start_ += size;
    Pending owner = std::move(pending_.front());
    pending_.pop_front();
    if (owner.sink) {
      owner.sink->deliver(owner.slot, owner.fragment, frame);
    } else if (!frame.empty() && frame.front() == '-') {
      std::string why(frame.substr(1, frame.size() - 3));
      spdlog::error("shard '{}' ({}) refused Santral's handshake: {}", target_.shard_name,
                    address_text(), why);
      go_down("handshake failed: " + why + " (check backend.password / backend.database)");
      return false;
    }
    if (generation != generation_) return false;
  }
  return true;
}

void BackendConnection::fail_all(const std::string& reply) {
  auto failed = std::move(pending_);
  pending_.clear();
  outbox_.clear();
  for (auto& p : failed)
    if (p.sink) p.sink->deliver(p.slot, p.fragment, reply);
}

// Drops the connection: everything in flight fails with `reply`, and a late answer to it can
// never arrive on the next connection.
void BackendConnection::reset(const std::string& reply, bool reconnect_now) {
  ++generation_;
  boost::system::error_code ignored;
  socket_.close(ignored);
  write_in_flight_ = false;
  writing_.clear();
  flush_posted_ = false;
  fail_all(reply);
  if (reconnect_now && state_ != State::Stopped) connect();
}

void BackendConnection::go_down(const std::string& reason) {
  if (state_ == State::Stopped) return;
  ++generation_;
  boost::system::error_code ignored;
  socket_.close(ignored);
  bool first = down_reason_.empty();
  down_reason_ = reason;
  state_ = State::Down;
  write_in_flight_ = false;
  writing_.clear();
  fail_all(as_reply(error_message(ClientError::ShardUnavailable, target_.shard_name,
                                  address_text(), reason)));
  backoff_ = backoff_.count() == 0
                 ? config_.timeouts.reconnect_min
                 : std::min(backoff_ * 2, config_.timeouts.reconnect_max);
  if (first)
    spdlog::warn("shard '{}' ({}) is down: {}; retrying every {} ms at most", target_.shard_name,
                 address_text(), reason, config_.timeouts.reconnect_max.count());
  retry_timer_.expires_after(backoff_);
  retry_timer_.async_wait([this, generation = generation_](boost::system::error_code ec) {
    if (ec || generation != generation_) return;
    connect();
  });
}

void BackendConnection::check_deadlines(std::chrono::steady_clock::time_point now) {
  if (state_ == State::Connecting && now - connect_started_ > config_.timeouts.connect) {
    go_down("no connection within " + std::to_string(config_.timeouts.connect.count()) +
            " ms (timeouts.connect_ms)");
    return;
  }
  if (state_ == State::Up && !pending_.empty() &&
      now - pending_.front().sent > config_.timeouts.request) {
    spdlog::warn("shard '{}' ({}) did not answer within {} ms; dropping {} in-flight requests "
                 "and reconnecting",
                 target_.shard_name, address_text(), config_.timeouts.request.count(),
                 pending_.size());
    reset(as_reply(error_message(ClientError::ShardTimeout, target_.shard_name, address_text(),
                                 config_.timeouts.request.count())),
          true);
  }
}

}  // namespace santral::router
