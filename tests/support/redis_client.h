#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace santral::test {

// A reply as hiredis decoded it, copied out so it outlives the client.
struct Reply {
  enum class Type { String, Status, Error, Integer, Nil, Array };
  Type type = Type::Nil;
  std::string str;
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_error() const { return type == Type::Error; }
  bool is_nil() const { return type == Type::Nil; }
  bool is_ok() const { return type == Type::Status && str == "OK"; }
};

// A real Redis client (hiredis, the C client) for talking to redis-server, nutcracker or
// Santral in tests. Throws std::runtime_error on connection failures, so a test fails loudly.
class RedisClient {
 public:
  explicit RedisClient(int port, int timeout_ms = 10000);
  ~RedisClient();
  RedisClient(RedisClient&&) noexcept;
  RedisClient& operator=(RedisClient&&) noexcept;

  Reply command(const std::vector<std::string>& args);
  Reply command(std::initializer_list<std::string_view> args);

  // Pipelining: queue commands, then read their replies in order.
  void append(const std::vector<std::string>& args);
  void append(std::initializer_list<std::string_view> args);
  Reply get_reply();

  bool connected() const;
  int fd() const;

 private:
  redisContext* ctx_ = nullptr;
};

// True when something on 127.0.0.1:port answers PING like a Redis server: PONG, or NOAUTH
// when it requires a password. For readiness checks.
bool answers_ping(int port);

// Connects to 127.0.0.1:port with a plain socket; for tests that must send bytes no client
// library would produce.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(std::string_view bytes);
  // Sends what the socket takes now without waiting; returns how many bytes that was (0 when
  // the peer stopped reading and the buffers are full). Throws when the peer is gone.
  std::size_t try_send(std::string_view bytes);
  // Reads until `expected` bytes arrived, the peer closed, or timeout. Returns what arrived.
  std::string read_some(std::size_t expected, int timeout_ms = 5000);
  // Reads until what arrived ends with `tail`, the peer closed, or nothing came for
  // `timeout_ms`. Returns what arrived.
  std::string read_until(std::string_view tail, int timeout_ms = 2000);
  // Reads until the peer closes the connection (true) or timeout (false); `received` gets
  // everything that arrived.
  bool wait_closed(std::string& received, int timeout_ms = 5000);
  int fd() const { return fd_; }
  // This end's port: how CLIENT LIST's addr= names the connection.
  int local_port() const;

 private:
  int fd_ = -1;
};

}  // namespace santral::test
