#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"
#include "placement/topology.h"
#include "router/process/worker.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

// The client listeners (`listen:`, `tls.listen:`): each accepted connection goes to the next
// worker in turn, or is told the router is full (limits.max_clients). On the server's thread.
class ClientListeners {
 public:
  // `topology`: the server's topology in force, read at each accept.
  ClientListeners(boost::asio::io_context& io, SharedState& shared,
                  const std::vector<std::unique_ptr<Worker>>& workers,
                  const placement::TopologyPtr& topology)
      : io_(io), shared_(shared), workers_(workers), topology_(topology), plain_(io), tls_(io) {}

  // Binds the config's listeners; false (and logged) when one cannot be.
  bool open(const config::Config& config);
  void start();
  // No more clients (shutdown); those already handed over stay.
  void close();
  // "127.0.0.1:6380", "127.0.0.1:6380 and TLS on 127.0.0.1:6390", "TLS on 127.0.0.1:6390".
  static std::string describe(const config::Config& config);

 private:
  bool open_one(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                std::uint16_t port, std::string_view what);
  void accept(boost::asio::ip::tcp::acceptor& acceptor, bool tls);
  void hand_over(boost::asio::ip::tcp::socket socket, bool tls);

  boost::asio::io_context& io_;
  SharedState& shared_;
  const std::vector<std::unique_ptr<Worker>>& workers_;
  const placement::TopologyPtr& topology_;
  boost::asio::ip::tcp::acceptor plain_;  // `listen:`, unless TLS only
  boost::asio::ip::tcp::acceptor tls_;    // `tls.listen:`
  std::size_t next_worker_ = 0;
  bool closed_ = false;
};

}  // namespace santral::router
