#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"
#include "router/admin/health_probes.h"

namespace santral::router {

class ControlPlane;

// The admin HTTP API (Boost.Beast), on the server's thread:
//   GET /             the operator's dashboard (router/admin/dashboard/, compiled in), which
//                     draws what the JSON pages below say
//   GET /stats        JSON: per worker, shard and command counters and latency percentiles
//   GET /metrics      the same in Prometheus text exposition format
//   GET /shards       each shard server's health as each worker sees it
//   GET /shards/info  each shard's keys and memory, from its primary's INFO
//   GET /config       the effective config and its version (no passwords), the last reload
//   GET /placement    each namespace's placement table (ring arcs, slots, ranges, groups)
//   GET /hotkeys      the hot-key report, salted counters with their sub-keys
//   POST /reload      reload the config file
//   GET /livez        200 while every event loop answers; GET /readyz: 200 while the router
//                     should get new clients, 503 and why not (router/admin/health_probes.h)
// With admin.token set, every request but the dashboard's files and the two probes needs
// "Authorization: Bearer <token>" (compared in constant time). With admin.tls it is HTTPS.
class AdminServer {
 public:
  AdminServer(boost::asio::io_context& io, ControlPlane& server);
  ~AdminServer();

  // Starts listening; an empty string, or what went wrong.
  std::string listen(const config::Admin& admin);
  void close();

 private:
  void accept();

  boost::asio::io_context& io_;
  ControlPlane& server_;
  HealthProbes probes_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::string token_;
  bool tls_ = false;  // HTTPS with the certificate of `tls:` (admin.tls)
};

}  // namespace santral::router
