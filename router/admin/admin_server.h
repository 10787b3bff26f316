#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"

namespace santral::router {

class Server;

// The admin HTTP API (Boost.Beast), on the server's thread:
//   GET /stats    JSON: per worker, shard and command counters and latency percentiles
//   GET /metrics  the same in Prometheus text exposition format
//   GET /shards   each shard server's health as each worker sees it
//   GET /config   the effective config and its version (no passwords)
//   GET /hotkeys  the hot-key report (404 until hot-key detection exists)
//   POST /reload  reload the config file
// With admin.token set, every request needs "Authorization: Bearer <token>".
class AdminServer {
 public:
  AdminServer(boost::asio::io_context& io, Server& server);
  ~AdminServer();

  // Starts listening; an empty string, or what went wrong.
  std::string listen(const config::Admin& admin);
  void close();

 private:
  void accept();

  boost::asio::io_context& io_;
  Server& server_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::string token_;
};

}  // namespace santral::router
