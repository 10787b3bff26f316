#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace santral::test {

// A shard played by a script, for unit tests of backend connections without redis-server: a
// loopback acceptor on the test's io_context. Each request (a command's words) on each
// accepted connection (numbered from 0, in the order accepted) goes to `answer`, whose reply
// (complete RESP bytes) is written back; nullopt: none, the shard holds it (a stalled one).
// `reading(false)` on a connection stops reading it: its bytes stay in the socket buffer, as a
// SIGSTOPped server's do.
class ScriptedShard {
 public:
  using Answer = std::function<std::optional<std::string>(std::size_t connection,
                                                          const std::vector<std::string>& words)>;
  ScriptedShard(boost::asio::io_context& io, Answer answer);
  ~ScriptedShard();
  ScriptedShard(const ScriptedShard&) = delete;
  ScriptedShard& operator=(const ScriptedShard&) = delete;

  std::uint16_t port() const { return port_; }
  std::size_t accepted() const;
  // Every request each connection sent so far, as text ("CLIENT KILL ID 7").
  std::vector<std::string> requests(std::size_t connection) const;
  // Stops (or resumes) reading `connection`.
  void reading(std::size_t connection, bool on);
  // Writes `bytes` to `connection` now (a late reply).
  void write(std::size_t connection, const std::string& bytes);

 private:
  struct Connection;
  void accept();
  void read(const std::shared_ptr<Connection>& connection);
  void serve(const std::shared_ptr<Connection>& connection);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_;
  Answer answer_;
  std::vector<std::shared_ptr<Connection>> connections_;
};

}  // namespace santral::test
