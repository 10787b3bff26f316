#include "tools/loadgen/open_loop_run.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tools/loadgen/connection.h"
#include "tools/loadgen/schedule.h"

namespace santral::loadgen {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr auto kLate = 1ms;  // a send later than this against its due time counts as late
constexpr double kUntilEofSeconds = 7 * 86400.0;  // the schedule's length with --until-eof

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One timer, set for the earliest due request. When it fires, every request due by then is
// queued on its connection (request i on connection i % C) and each connection writes what it
// got in one write. After the last request the timer becomes the drain deadline.
class OpenLoopRun {
 public:
  explicit OpenLoopRun(const RunOptions& options)
      : options_(options),
        encoder_(options.command, options.keys, options.seed),
        timer_(io_),
        input_(io_) {}

  RunResult run() {
    connect();
    if (!result_.failure.empty()) return std::move(result_);
    const auto first_measured =
        static_cast<std::uint64_t>(std::llround(options_.rate * options_.warmup));
    const double length = options_.until_eof ? kUntilEofSeconds : options_.duration;
    const auto total =
        static_cast<std::uint64_t>(std::llround(options_.rate * (options_.warmup + length)));
    schedule_.emplace(Clock::now(), options_.rate, total);
    first_measured_ = first_measured;
    measured_from_ = schedule_->due(first_measured);
    schedule_end_ = schedule_->start() + seconds(options_.warmup + length);
    result_.scheduled = total - first_measured;
    result_.started = true;
    for (auto& connection : connections_) connection->start_reading();
    if (options_.until_eof) {
      boost::system::error_code ec;
      input_.assign(::dup(STDIN_FILENO), ec);
      if (ec) {
        stop(fmt::format("cannot read standard input: {}", ec.message()));
        return std::move(result_);
      }
      read_input();
    }
    arm(schedule_->start());
    io_.run();
    write_log();
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
    ConnectionEvents events{[this](Clock::time_point intended, Clock::time_point arrived,
                                   bool error, std::string_view reply, std::uint64_t key) {
                              on_reply(intended, arrived, error, reply, key);
                            },
                            [this](std::string_view what) { stop(std::string(what)); }};
    for (int i = 0; i < options_.connections; ++i) {
      connections_.push_back(std::make_unique<Connection>(io_, i, events));
      connections_.back()->connect(endpoints, ec);
      if (ec) {
        result_.failure = fmt::format("cannot connect to {}:{} (connection {}): {}", options_.host,
                                      options_.port, i, ec.message());
        return;
      }
      if (options_.user.empty()) continue;
      if (auto refused = connections_.back()->login(options_.user, options_.password);
          !refused.empty()) {
        result_.failure = fmt::format("connection {}: {}", i, refused);
        return;
      }
    }
  }

  // --until-eof: each line names a phase from now on; the end of the input ends the schedule.
  void read_input() {
    input_.async_read_some(
        boost::asio::buffer(input_buffer_),
        [this](const boost::system::error_code& ec, std::size_t n) { on_input(ec, n); });
  }

  void on_input(const boost::system::error_code& ec, std::size_t n) {
    if (stopped_) return;
    if (ec) return end_schedule();  // the end of the input (a read error ends it too)
    const auto now = Clock::now();
    input_text_.append(input_buffer_.data(), n);
    for (auto end = input_text_.find('\n'); end != std::string::npos;
         end = input_text_.find('\n')) {
      auto line = input_text_.substr(0, end);
      input_text_.erase(0, end + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty()) phases_.push_back({std::move(line), now});
    }
    read_input();
  }

  void end_schedule() {
    const auto now = Clock::now();
    schedule_->end_at(next_);
    schedule_end_ = now;
    result_.scheduled = next_ > first_measured_ ? next_ - first_measured_ : 0;
    if (answered_ == next_) return stop("");
    timer_.cancel();
    arm(now + seconds(options_.drain_seconds));
  }

  // Each arm() makes the waits before it stale: a wait that had already expired when
  // end_schedule() cancelled it still runs its handler (cancel() cannot reach it), and must not
  // be taken for the drain deadline, which would stop the run with replies still on the way.
  void arm(Clock::time_point at) {
    timer_.expires_at(at);
    timer_.async_wait([this, armed = ++armed_](const boost::system::error_code& ec) {
      if (!ec && !stopped_ && armed == armed_) on_timer();
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
      const auto key = encoder_.append(connection.pending());
      connection.queued(schedule_->due(next_), next_ >= first_measured_, key);
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
                std::string_view reply, std::uint64_t key) {
    ++answered_;
    if (!options_.log.empty())
      log_.push_back({intended - schedule_->start(), arrived - intended, key, error});
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
    boost::system::error_code ignored;
    if (input_.is_open()) input_.close(ignored);
    for (auto& connection : connections_) connection->close();
  }

  void write_log() {
    if (options_.log.empty()) return;
    std::FILE* out = std::fopen(options_.log.c_str(), "w");
    if (out == nullptr) {
      if (result_.failure.empty()) result_.failure = fmt::format("cannot write {}", options_.log);
      return;
    }
    const auto ns = [](Clock::duration d) {
      return static_cast<long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    };
    for (const auto& phase : phases_)
      fmt::print(out, "phase {} {}\n", phase.name, ns(phase.started - schedule_->start()));
    for (const auto& entry : log_)
      fmt::print(out, "{} {} {} {}\n", ns(entry.intended), entry.key,
                 std::max<long long>(0, ns(entry.latency) / 1000), entry.error ? 1 : 0);
    std::fclose(out);
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
  std::uint64_t armed_ = 0;  // arm() calls so far: only the last one's wait counts
  RunResult result_;
  boost::asio::posix::stream_descriptor input_;  // --until-eof: standard input
  std::array<char, 512> input_buffer_{};
  std::string input_text_;
  struct Phase {
    std::string name;
    Clock::time_point started;
  };
  std::vector<Phase> phases_;
  struct Logged {
    Clock::duration intended;  // from the schedule's start
    Clock::duration latency;
    std::uint64_t key;
    bool error;
  };
  std::vector<Logged> log_;  // --log: every answered request
};

}  // namespace

RunResult run_open_loop(const RunOptions& options) {
  return OpenLoopRun(options).run();
}

}  // namespace santral::loadgen
