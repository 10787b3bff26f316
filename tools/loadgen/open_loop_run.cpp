#include "tools/loadgen/open_loop_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tools/loadgen/connection.h"
#include "tools/loadgen/schedule.h"

namespace santral::loadgen {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr auto kLate = 1ms;  // a send later than this against its due time counts as late

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One timer, set for the earliest due request. When it fires, every request due by then is
// queued on its connection (request i on connection i % C) and each connection writes what it
// got in one write. After the last request the timer becomes the drain deadline.
class OpenLoopRun {
 public:
  explicit OpenLoopRun(const RunOptions& options)
      : options_(options), encoder_(options.command, options.keys, options.seed), timer_(io_) {}

  RunResult run() {
    connect();
    if (!result_.failure.empty()) return std::move(result_);
    const auto first_measured =
        static_cast<std::uint64_t>(std::llround(options_.rate * options_.warmup));
    const auto total = static_cast<std::uint64_t>(
        std::llround(options_.rate * (options_.warmup + options_.duration)));
    schedule_.emplace(Clock::now(), options_.rate, total);
    first_measured_ = first_measured;
    measured_from_ = schedule_->due(first_measured);
    schedule_end_ = schedule_->start() + seconds(options_.warmup + options_.duration);
    result_.scheduled = total - first_measured;
    result_.started = true;
    for (auto& connection : connections_) connection->start_reading();
    arm(schedule_->start());
    io_.run();
    return finish_result();
  }

 private:
  void connect() {
    boost::system::error_code ec;
    asio::ip::tcp::resolver resolver(io_);
    const auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port), ec);
    if (ec) {
      result_.failure = fmt::format("cannot resolve {}: {}", options_.host, ec.message());
      return;
    }
    ConnectionEvents events{
        [this](Clock::time_point intended, Clock::time_point arrived, bool error,
               std::string_view reply) { on_reply(intended, arrived, error, reply); },
        [this](std::string_view what) { stop(std::string(what)); }};
    for (int i = 0; i < options_.connections; ++i) {
      connections_.push_back(std::make_unique<Connection>(io_, i, events));
      connections_.back()->connect(endpoints, ec);
      if (ec) {
        result_.failure = fmt::format("cannot connect to {}:{} (connection {}): {}", options_.host,
                                      options_.port, i, ec.message());
        return;
      }
    }
  }

  void arm(Clock::time_point at) {
    timer_.expires_at(at);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && !stopped_) on_timer();
    });
  }

  void on_timer() {
    if (next_ == schedule_->total()) return stop("");  // the drain deadline passed
    const auto now = Clock::now();
    const auto due = schedule_->due_by(now);
    // How late the send loop is, over the measured requests (the warm-up's start-up is not).
    if (const auto first = std::max(next_, first_measured_); due > first) {
      result_.behind_ms =
          std::max(result_.behind_ms,
                   std::chrono::duration<double, std::milli>(now - schedule_->due(first)).count());
      result_.late += std::max(first, schedule_->due_by(now - kLate)) - first;
    }
    const auto count = static_cast<std::uint64_t>(connections_.size());
    const auto first_queued = next_;
    for (; next_ < due; ++next_) {
      auto& connection = *connections_[next_ % count];
      encoder_.append(connection.pending());
      connection.queued(schedule_->due(next_), next_ >= first_measured_);
    }
    // One write per connection that got requests (all of them once a turn covers C requests).
    for (auto i = first_queued; i < due && i < first_queued + count; ++i)
      connections_[i % count]->flush();
    if (next_ < schedule_->total())
      arm(schedule_->due(next_));
    else if (answered_ == schedule_->total())
      stop("");
    else
      arm(schedule_end_ + seconds(options_.drain_seconds));
  }

  void on_reply(Clock::time_point intended, Clock::time_point arrived, bool error,
                std::string_view reply) {
    ++answered_;
    if (error && result_.errors++ == 0) result_.first_error = std::string(reply.substr(0, 200));
    if (intended >= measured_from_) {
      ++result_.received;
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(arrived - intended);
      result_.latencies.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, us.count())));
      last_measured_arrival_ = arrived;
    }
    if (next_ == schedule_->total() && answered_ == schedule_->total()) stop("");
  }

  void stop(std::string failure) {
    if (stopped_) return;
    stopped_ = true;
    result_.failure = std::move(failure);
    timer_.cancel();
    for (auto& connection : connections_) connection->close();
  }

  RunResult finish_result() {
    for (auto& connection : connections_) result_.sent += connection->sent_measured();
    result_.missing = next_ - answered_;
    if (result_.received > 0) {
      const double window =
          std::chrono::duration<double>(last_measured_arrival_ - measured_from_).count();
      if (window > 0) result_.achieved_rate = static_cast<double>(result_.received) / window;
    }
    return std::move(result_);
  }

  RunOptions options_;
  asio::io_context io_;
  RequestEncoder encoder_;
  asio::steady_timer timer_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::optional<Schedule> schedule_;
  std::uint64_t first_measured_ = 0;
  Clock::time_point measured_from_, schedule_end_, last_measured_arrival_;
  std::uint64_t next_ = 0;      // the first request not yet queued
  std::uint64_t answered_ = 0;  // replies, warm-up included
  bool stopped_ = false;
  RunResult result_;
};

}  // namespace

RunResult run_open_loop(const RunOptions& options) {
  return OpenLoopRun(options).run();
}

}  // namespace santral::loadgen
