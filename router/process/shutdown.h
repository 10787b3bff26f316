#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "placement/topology.h"
#include "router/process/worker.h"

namespace santral::router {

// The process's signals, on the server's thread. SIGHUP reloads. The first SIGINT or SIGTERM
// shuts down gracefully: /readyz answers 503 at once, and for shutdown.ready_delay_ms the
// router serves on (a load balancer stops sending it new clients meanwhile); then no new
// work, every worker answers what its clients already sent, then the server's io_context
// stops (at the latest after drain_ms); a second signal exits at once.
//
//   signal ──► draining() ─ready_delay_ms─► stop_taking_work() ──► each worker drains ──►
//              (/readyz: 503)                                            io.stop()
//                                   └──── drain_ms passed ──────────────────┘
class Shutdown {
 public:
  struct Steps {
    std::function<void()> reload;            // SIGHUP
    std::function<void()> stop_taking_work;  // listeners, admin API, timers
  };

  Shutdown(boost::asio::io_context& io, const std::vector<std::unique_ptr<Worker>>& workers,
           const placement::TopologyPtr& serving, Steps steps);

  void wait_for_signals();
  // A signal asked the process to stop: it is no longer ready for new clients.
  bool draining() const { return shutting_down_; }

 private:
  void begin(int signal);
  void drain();
  void finish();

  boost::asio::io_context& io_;
  const std::vector<std::unique_ptr<Worker>>& workers_;
  const placement::TopologyPtr& serving_;
  Steps steps_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer drain_timer_;  // ready_delay_ms, then drain_ms
  bool shutting_down_ = false;
  std::size_t drained_workers_ = 0;
};

}  // namespace santral::router
