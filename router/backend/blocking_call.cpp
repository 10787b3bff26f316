#include "router/backend/blocking_call.h"

#include <stdexcept>

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

bool is_null_reply(const std::string& frame) {
  return frame == "$-1\r\n" || frame == "*-1\r\n" || frame == "_\r\n";
}

namespace {

// One call's operations, run one at a time on `io`, all bounded by `deadline`.
struct Call {
  asio::io_context& io;
  tcp::socket& socket;
  const config::Endpoint& server;
  std::chrono::milliseconds timeout;
  std::chrono::steady_clock::time_point deadline;
  boost::system::error_code ec{};
  bool finished = false;

  auto done() {
    return [this](boost::system::error_code e, auto&&...) {
      ec = e;
      finished = true;
    };
  }
  // Runs the operation started last until it finishes or the deadline passes.
  void wait(const char* doing) {
    io.restart();
    io.run_until(deadline);
    if (!finished) {
      socket.close(ec);
      io.restart();
      io.run();
      throw std::runtime_error(fmt::format("{} did not answer within {} ms ({})", server.text(),
                                           timeout.count(), doing));
    }
    if (ec)
      throw std::runtime_error(fmt::format("{}: {} ({})", server.text(), ec.message(), doing));
    finished = false;
  }
};

template <class Stream>
std::vector<std::string> converse(Call& call, Stream& stream, const ShardLogin& login,
                                  std::string_view login_key,
                                  const std::vector<std::vector<std::string>>& commands) {
  std::string request;
  protocol::RespWriter writer(request);
  std::size_t expected = commands.size();
  if (!login.password.empty()) {
    std::string_view user = login.user.empty() ? std::string_view("default") : login.user;
    std::string_view auth[] = {"AUTH", user, login.password};
    writer.command(auth);
    ++expected;
  }
  for (const auto& command : commands) {
    std::vector<std::string_view> args(command.begin(), command.end());
    writer.command(args);
  }
  asio::async_write(stream, asio::buffer(request), call.done());
  call.wait("sending");

  std::vector<std::string> replies;
  std::string buffer;
  char chunk[4096];
  while (replies.size() < expected) {
    protocol::ReplyScanner scanner;
    std::size_t length = 0;
    auto status = scanner.scan(buffer, length);
    if (status == protocol::ScanStatus::Complete) {
      replies.push_back(buffer.substr(0, length));
      buffer.erase(0, length);
      continue;
    }
    if (status == protocol::ScanStatus::Error)
      throw std::runtime_error(call.server.text() + " answered something that is not RESP");
    std::size_t got = 0;
    stream.async_read_some(asio::buffer(chunk), [&](boost::system::error_code e, std::size_t n) {
      got = n;
      call.done()(e);
    });
    call.wait("reading");
    buffer.append(chunk, got);
  }
  if (!login.password.empty()) {
    if (protocol::is_error_frame(replies.front()))
      throw std::runtime_error(fmt::format("{} refused {}: {}", call.server.text(), login_key,
                                           protocol::line_text(replies.front())));
    replies.erase(replies.begin());
  }
  return replies;
}

}  // namespace

std::vector<std::string> blocking_call(const config::Endpoint& shard, const ShardLogin& login,
                                       std::string_view login_key,
                                       const std::vector<std::vector<std::string>>& commands,
                                       std::chrono::milliseconds timeout, const TlsContexts* tls) {
  asio::io_context io;
  tcp::socket socket(io);
  Call call{io, socket, shard, timeout, std::chrono::steady_clock::now() + timeout};
  tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(shard.host, std::to_string(shard.port), call.ec);
  if (call.ec) throw std::runtime_error(fmt::format("{}: {}", shard.text(), call.ec.message()));
  asio::async_connect(socket, endpoints, call.done());
  call.wait("connecting");
  if (tls == nullptr || !tls->shards) return converse(call, socket, login, login_key, commands);

  asio::ssl::stream<tcp::socket&> stream(socket, *tls->shards);
  expect_shard_name(stream.native_handle(), *tls, shard.host);
  stream.async_handshake(asio::ssl::stream_base::client, call.done());
  try {
    call.wait("TLS handshake");
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{} (TLS: {})", e.what(), handshake_failure(stream.native_handle(), call.ec)));
  }
  return converse(call, stream, login, login_key, commands);
}

}  // namespace santral::router
