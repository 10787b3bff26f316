#include "router/process/shutdown.h"

#include <csignal>
#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace santral::router {

namespace asio = boost::asio;

Shutdown::Shutdown(asio::io_context& io, const std::vector<std::unique_ptr<Worker>>& workers,
                   const placement::TopologyPtr& serving, Steps steps)
    : io_(io),
      workers_(workers),
      serving_(serving),
      steps_(std::move(steps)),
      signals_(io, SIGINT, SIGTERM, SIGHUP),
      drain_timer_(io) {}

void Shutdown::wait_for_signals() {
  signals_.async_wait([this](boost::system::error_code error, int signal) {
    if (error) return;
    if (signal == SIGHUP) {
      steps_.reload();
    } else if (shutting_down_) {
      spdlog::warn("second {}: exiting at once", signal == SIGINT ? "SIGINT" : "SIGTERM");
      std::_Exit(1);
    } else {
      begin(signal);
    }
    wait_for_signals();
  });
}

// Says it is not ready (GET /readyz) and serves on for shutdown.ready_delay_ms, so that a
// load balancer polling /readyz stops sending new clients before the listeners close.
void Shutdown::begin(int signal) {
  shutting_down_ = true;
  const auto& config = *serving_->config;
  auto delay = config.shutdown.ready_delay;
  spdlog::info(
      "received {}: /readyz answers 503; {}answering what was already sent (up to {} ms); send "
      "it again to exit at once",
      signal == SIGINT ? "SIGINT" : "SIGTERM",
      delay.count() > 0
          ? fmt::format("serving on for {} ms (shutdown.ready_delay_ms), then no new clients, ",
                        delay.count())
          : std::string("no new clients; "),
      config.drain.count());
  if (delay.count() == 0) return drain();
  drain_timer_.expires_after(delay);
  drain_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) drain();
  });
}

// Stops accepting, then lets every worker answer what its clients already sent; exits when
// all are done or when drain_ms has passed.
void Shutdown::drain() {
  steps_.stop_taking_work();
  for (const auto& worker : workers_) {
    Worker* w = worker.get();
    asio::post(w->io(), [this, w] {
      w->drain([this] {
        asio::post(io_, [this] {
          if (++drained_workers_ == workers_.size()) finish();
        });
      });
    });
  }
  drain_timer_.expires_after(serving_->config->drain);
  drain_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    spdlog::warn("drain_ms passed with clients still waiting for replies; closing them");
    finish();
  });
}

void Shutdown::finish() {
  drain_timer_.cancel();
  signals_.cancel();
  io_.stop();
}

}  // namespace santral::router
