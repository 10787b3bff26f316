#include "tests/support/sentinel_process.h"

#include <stdexcept>

#include "tests/support/free_port.h"

namespace santral::test {

SentinelProcess::SentinelProcess(const std::string& master, int primary_port, int quorum,
                                 const std::string& extra)
    : port_(free_loopback_port()) {
  // Sentinel rewrites its file as it learns: a file of its own in a directory of its own.
  auto file =
      dir_.write("sentinel.conf",
                 "port " + std::to_string(port_) + "\nbind 127.0.0.1\ndir " + dir_.path().string() +
                     "\nsentinel monitor " + master + " 127.0.0.1 " + std::to_string(primary_port) +
                     " " + std::to_string(quorum) + "\nsentinel down-after-milliseconds " + master +
                     " 1000\nsentinel failover-timeout " + master + " 3000\n" + extra);
  process_ = std::make_unique<Process>(
      std::vector<std::string>{"redis-server", file.string(), "--sentinel"},
      (dir_.path() / "sentinel.log").string());
  bool up = wait_until(
      [&] {
        if (!process_->running()) return true;
        // Its own log first: a PONG alone may come from another test's server on this port.
        return process_->log_of_this_run().find("+monitor master") != std::string::npos &&
               answers_ping(port_);
      },
      10000);
  if (!up || !process_->running())
    throw std::runtime_error("redis sentinel did not start on port " + std::to_string(port_) +
                             ": " + process_->log());
}

}  // namespace santral::test
