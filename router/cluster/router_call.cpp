#include "router/cluster/router_call.h"

#include <memory>

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply_scanner.h"

namespace santral::router {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

struct RouterCall : std::enable_shared_from_this<RouterCall> {
  RouterCall(asio::io_context& io, std::vector<std::string> requests, RouterAnswer done)
      : resolver(io), socket(io), timer(io), requests(std::move(requests)), done(std::move(done)) {}

  tcp::resolver resolver;
  tcp::socket socket;
  asio::steady_timer timer;
  std::vector<std::string> requests;
  RouterAnswer done;
  std::string out, in;
  protocol::ReplyScanner scanner;  // resumes where it stopped: a large reply is scanned once
  std::size_t replies = 0;
  std::size_t read_at = 0;  // where the reply being scanned starts in `in`

  void start(const config::Endpoint& router, std::chrono::milliseconds timeout) {
    auto self = shared_from_this();
    timer.expires_after(timeout);
    timer.async_wait([self, timeout](boost::system::error_code ec) {
      if (!ec) self->finish({}, fmt::format("no answer within {:g} s", timeout.count() / 1000.0));
    });
    resolver.async_resolve(
        router.host, std::to_string(router.port),
        [self](boost::system::error_code ec, const tcp::resolver::results_type& at) {
          if (ec) return self->finish({}, "cannot resolve it: " + ec.message());
          self->connect(at);
        });
  }

  void connect(const tcp::resolver::results_type& at) {
    auto self = shared_from_this();
    asio::async_connect(socket, at, [self](boost::system::error_code ec, const tcp::endpoint&) {
      if (ec) return self->finish({}, "cannot connect: " + ec.message());
      for (const auto& request : self->requests) self->out += request;
      asio::async_write(self->socket, asio::buffer(self->out),
                        [self](boost::system::error_code ec, std::size_t) {
                          if (ec) return self->finish({}, "cannot send: " + ec.message());
                          self->read();
                        });
    });
  }

  void read() {
    for (;;) {
      std::size_t length = 0;
      auto status = scanner.scan(std::string_view(in).substr(read_at), length);
      if (status == protocol::ScanStatus::Error) return finish({}, "its reply is not RESP");
      if (status == protocol::ScanStatus::NeedMore) break;
      if (++replies == requests.size()) return finish(in.substr(read_at, length), {});
      read_at += length;
    }
    auto self = shared_from_this();
    std::size_t had = in.size();
    in.resize(had + 65536);
    socket.async_read_some(asio::buffer(in.data() + had, 65536),
                           [self, had](boost::system::error_code ec, std::size_t got) {
                             self->in.resize(had + got);
                             if (ec) return self->finish({}, "connection lost: " + ec.message());
                             self->read();
                           });
  }

  void finish(std::string frame, std::string error) {
    if (!done) return;
    auto answer = std::exchange(done, nullptr);
    boost::system::error_code ignored;
    timer.cancel();
    resolver.cancel();
    socket.close(ignored);
    answer(std::move(frame), std::move(error));
  }
};

}  // namespace

void call_router(boost::asio::io_context& io, const config::Endpoint& router,
                 std::vector<std::string> requests, std::chrono::milliseconds timeout,
                 RouterAnswer done) {
  std::make_shared<RouterCall>(io, std::move(requests), std::move(done))->start(router, timeout);
}

}  // namespace santral::router
