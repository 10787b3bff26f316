#include "router/cluster/shard_acl.h"

#include <random>
#include <stdexcept>

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

bool is_error(const std::string& frame) {
  return !frame.empty() && (frame.front() == '-' || frame.front() == '!');
}

bool is_null(const std::string& frame) {
  return frame == "$-1\r\n" || frame == "*-1\r\n" || frame == "_\r\n";
}

std::string text_of(std::string frame) {
  if (!frame.empty() && (frame.front() == '-' || frame.front() == '+')) frame.erase(0, 1);
  while (!frame.empty() && (frame.back() == '\n' || frame.back() == '\r')) frame.pop_back();
  return frame;
}

}  // namespace

ShardAccount lease_account(std::string_view fleet, std::int64_t lease) {
  std::random_device random;
  std::string password;
  for (int i = 0; i < 4; ++i) password += fmt::format("{:08x}", random());
  return {fmt::format("santral:{}:{:x}", fleet, lease), password};
}

ShardAcl::ShardAcl(ShardAccount admin, std::chrono::milliseconds timeout)
    : admin_(std::move(admin)), timeout_(timeout) {}

std::vector<std::string> ShardAcl::call(
    const config::Endpoint& shard, const std::vector<std::vector<std::string>>& commands) const {
  asio::io_context io;
  tcp::socket socket(io);
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  boost::system::error_code ec;
  bool finished = false;
  // Runs the operation started last until it finishes or the deadline passes.
  auto wait = [&](const char* doing) {
    io.restart();
    io.run_until(deadline);
    if (!finished) {
      socket.close(ec);
      io.restart();
      io.run();
      throw std::runtime_error(fmt::format("{} did not answer within {} ms ({})", shard.text(),
                                           timeout_.count(), doing));
    }
    if (ec) throw std::runtime_error(fmt::format("{}: {} ({})", shard.text(), ec.message(), doing));
    finished = false;
  };
  tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(shard.host, std::to_string(shard.port), ec);
  if (ec) throw std::runtime_error(fmt::format("{}: {}", shard.text(), ec.message()));
  asio::async_connect(socket, endpoints, [&](boost::system::error_code e, const tcp::endpoint&) {
    ec = e;
    finished = true;
  });
  wait("connecting");

  std::string request;
  protocol::RespWriter writer(request);
  std::size_t expected = commands.size();
  if (!admin_.password.empty()) {
    std::string_view user = admin_.user.empty() ? std::string_view("default") : admin_.user;
    std::string_view auth[] = {"AUTH", user, admin_.password};
    writer.command(auth);
    ++expected;
  }
  for (const auto& command : commands) {
    std::vector<std::string_view> args(command.begin(), command.end());
    writer.command(args);
  }
  asio::async_write(socket, asio::buffer(request), [&](boost::system::error_code e, std::size_t) {
    ec = e;
    finished = true;
  });
  wait("sending");

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
      throw std::runtime_error(shard.text() + " answered something that is not RESP");
    std::size_t got = 0;
    socket.async_read_some(asio::buffer(chunk), [&](boost::system::error_code e, std::size_t n) {
      ec = e;
      got = n;
      finished = true;
    });
    wait("reading");
    buffer.append(chunk, got);
  }
  if (!admin_.password.empty()) {
    if (is_error(replies.front()))
      throw std::runtime_error(fmt::format("{} refused backend.username/password: {}", shard.text(),
                                           text_of(replies.front())));
    replies.erase(replies.begin());
  }
  return replies;
}

std::string ShardAcl::admit(const config::Endpoint& shard, const ShardAccount& account) const {
  try {
    auto found = call(shard, {{"ACL", "GETUSER", account.user}});
    if (is_error(found[0]))
      return fmt::format("{}: ACL GETUSER {}: {}", shard.text(), account.user, text_of(found[0]));
    if (!is_null(found[0])) return "";  // made before, or shut out: left as it is
    auto made = call(shard, {{"ACL", "SETUSER", account.user, "reset", "on", ">" + account.password,
                              "~*", "&*", "+@all"}});
    if (is_error(made[0]))
      return fmt::format("{}: ACL SETUSER {}: {}", shard.text(), account.user, text_of(made[0]));
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string ShardAcl::shut_out(const config::Endpoint& shard, const std::string& user) const {
  try {
    auto replies = call(shard, {{"ACL", "SETUSER", user, "off"}, {"CLIENT", "KILL", "USER", user}});
    for (const auto& reply : replies)
      if (is_error(reply)) return fmt::format("{}: {}", shard.text(), text_of(reply));
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace santral::router
