#pragma once

#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>

#include "config/config.h"
#include "router/shared_state.h"
#include "router/worker.h"

namespace santral::router {

// Accepts clients on the configured address and hands each to a worker in turn. The acceptor
// and the signal handling run on the calling thread; requests never do.
class Server {
 public:
  explicit Server(config::Config config);
  ~Server();

  // Serves until SIGINT or SIGTERM; returns the process exit code.
  int run();

 private:
  void accept();
  void shutdown();

  config::Config config_;
  SharedState shared_;
  // Before io_: a pending accept holds a socket of a worker's io_context, so the workers must
  // outlive the acceptor's io_context.
  std::vector<std::unique_ptr<Worker>> workers_;
  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::signal_set signals_;
  std::size_t next_worker_ = 0;
};

}  // namespace santral::router
