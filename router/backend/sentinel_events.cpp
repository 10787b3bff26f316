#include "router/backend/sentinel_events.h"

#include <array>

#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kRetry = std::chrono::seconds(1);

}  // namespace

// One sentinel's subscription: connect, AUTH when configured, SUBSCRIBE to kChannels, then
// read messages until the connection ends; then again after kRetry.
class SentinelEvents::Subscription : public std::enable_shared_from_this<Subscription> {
 public:
  Subscription(asio::io_context& io, config::Endpoint sentinel,
               const config::SentinelSettings& login, Heard heard)
      : sentinel_(std::move(sentinel)),
        username_(login.username),
        password_(login.password),
        heard_(std::move(heard)),
        resolver_(io),
        socket_(io),
        retry_(io) {}

  void start() {
    buffer_.clear();
    said_subscribed_ = false;
    resolver_.async_resolve(
        sentinel_.host, std::to_string(sentinel_.port),
        [self = shared_from_this()](boost::system::error_code ec,
                                    const tcp::resolver::results_type& endpoints) {
          if (ec) return self->again(ec.message());
          asio::async_connect(self->socket_, endpoints,
                              [self](boost::system::error_code connect_ec, const tcp::endpoint&) {
                                if (connect_ec) return self->again(connect_ec.message());
                                self->subscribe();
                              });
        });
  }

 private:
  void subscribe() {
    request_.clear();
    protocol::RespWriter writer(request_);
    if (!password_.empty()) {
      std::string_view user = username_.empty() ? std::string_view("default") : username_;
      std::string_view auth[] = {"AUTH", user, password_};
      writer.command(auth);
    }
    std::vector<std::string_view> command{"SUBSCRIBE"};
    for (const char* channel : kChannels) command.emplace_back(channel);
    writer.command(command);
    asio::async_write(socket_, asio::buffer(request_),
                      [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                        if (ec) return self->again(ec.message());
                        self->read();
                      });
  }

  void read() {
    socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](
                                                      boost::system::error_code ec, std::size_t n) {
      if (ec) return self->again(ec == asio::error::eof ? "closed the connection" : ec.message());
      self->buffer_.append(self->chunk_.data(), n);
      if (!self->take_frames()) return;
      self->read();
    });
  }

  // Every complete frame in buffer_: an error ends the subscription (a refused AUTH, ...), a
  // message is heard. False when the connection was given up.
  bool take_frames() {
    for (;;) {
      protocol::ReplyScanner scanner;
      std::size_t length = 0;
      auto status = scanner.scan(buffer_, length);
      if (status == protocol::ScanStatus::Error) {
        again("answered something that is not RESP");
        return false;
      }
      if (status != protocol::ScanStatus::Complete) return true;
      std::string frame = buffer_.substr(0, length);
      buffer_.erase(0, length);
      protocol::ReplyValue value;
      if (!protocol::parse_reply(frame, value)) continue;
      if (value.is_error()) {
        again("refused: " + std::string(value.text) + " (check sentinel.username/password)");
        return false;
      }
      if (value.elements.size() == 3 && value.elements[0].text == "subscribe" &&
          !said_subscribed_) {
        said_subscribed_ = true;
        last_failure_.clear();
        spdlog::info("Sentinel {}: subscribed to +switch-master, +sdown, -sdown, +odown",
                     sentinel_.text());
      }
      if (value.elements.size() == 3 && value.elements[0].text == "message")
        heard_(sentinel_.text(), std::string(value.elements[1].text),
               std::string(value.elements[2].text));
    }
  }

  void again(const std::string& why) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    // Said once per change of reason: a sentinel that stays down is not logged every second.
    if (said_subscribed_ || why != last_failure_)
      spdlog::warn(
          "Sentinel {}: no event subscription ({}); it is tried again every {} s, and the "
          "sentinels are still asked every 250 ms",
          sentinel_.text(), why, kRetry.count());
    last_failure_ = why;
    said_subscribed_ = false;
    retry_.expires_after(kRetry);
    retry_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->start();
    });
  }

  config::Endpoint sentinel_;
  std::string username_, password_;
  Heard heard_;
  tcp::resolver resolver_;
  tcp::socket socket_;
  asio::steady_timer retry_;
  std::string request_, buffer_;
  std::array<char, 4096> chunk_{};
  bool said_subscribed_ = false;
  std::string last_failure_;  // the last reason logged
};

SentinelEvents::SentinelEvents(const config::SentinelSettings& sentinel, const Heard& heard) {
  for (const auto& address : sentinel.addresses) {
    subscriptions_.push_back(std::make_shared<Subscription>(io_, address, sentinel, heard));
    subscriptions_.back()->start();
  }
  thread_ = std::thread([this] { io_.run(); });
}

SentinelEvents::~SentinelEvents() {
  io_.stop();
  thread_.join();
}

}  // namespace santral::router
