#include "tests/support/redis_client.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>

namespace santral::test {
namespace {

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::Status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::Array;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.type = Reply::Type::Nil;
  }
  return out;
}

std::vector<std::string> to_vector(std::initializer_list<std::string_view> args) {
  std::vector<std::string> out;
  for (auto a : args) out.emplace_back(a);
  return out;
}

}  // namespace

RedisClient::RedisClient(int port, int timeout_ms) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ctx_ = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (ctx_ == nullptr || ctx_->err) {
    std::string why = ctx_ ? ctx_->errstr : "out of memory";
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  redisSetTimeout(ctx_, tv);
}

RedisClient::~RedisClient() {
  if (ctx_) redisFree(ctx_);
}

RedisClient::RedisClient(RedisClient&& other) noexcept : ctx_(other.ctx_) {
  other.ctx_ = nullptr;
}

RedisClient& RedisClient::operator=(RedisClient&& other) noexcept {
  if (this != &other) {
    if (ctx_) redisFree(ctx_);
    ctx_ = other.ctx_;
    other.ctx_ = nullptr;
  }
  return *this;
}

void RedisClient::append(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
      REDIS_OK)
    throw std::runtime_error("hiredis could not queue the command");
}

void RedisClient::append(std::initializer_list<std::string_view> args) {
  append(to_vector(args));
}

Reply RedisClient::get_reply() {
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr)
    throw std::runtime_error(std::string("connection error: ") + ctx_->errstr);
  Reply out = convert(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return out;
}

Reply RedisClient::command(const std::vector<std::string>& args) {
  append(args);
  return get_reply();
}

Reply RedisClient::command(std::initializer_list<std::string_view> args) {
  return command(to_vector(args));
}

bool RedisClient::connected() const {
  return ctx_ != nullptr && ctx_->err == 0;
}
int RedisClient::fd() const {
  return ctx_->fd;
}

bool answers_ping(int port) {
  try {
    auto reply = RedisClient(port, 200).command({"PING"});
    return reply.str == "PONG" || (reply.is_error() && reply.str.rfind("NOAUTH", 0) == 0);
  } catch (const std::exception&) {
    return false;
  }
}

RawConnection::RawConnection(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
}

RawConnection::~RawConnection() {
  ::close(fd_);
}

void RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::size_t RawConnection::try_send(std::string_view bytes) {
  ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  throw std::runtime_error("send failed");
}

std::string RawConnection::read_until(std::string_view tail, int timeout_ms) {
  std::string received;
  while (!received.ends_with(tail)) {
    std::string more = read_some(1, timeout_ms);
    if (more.empty()) break;
    received += more;
  }
  return received;
}

int RawConnection::local_port() const {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

std::string RawConnection::read_some(std::size_t expected, int timeout_ms) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[65536];
  while (out.size() < expected) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RawConnection::wait_closed(std::string& received, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    received.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace santral::test
