#pragma once

#include <memory>
#include <string>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

// A real Redis Sentinel (`redis-server sentinel.conf --sentinel`) on a free 127.0.0.1 port,
// monitoring `master` at 127.0.0.1:`primary_port` with `quorum`; quick to judge, for tests:
// down after 1000 ms without an answer, a failover given up after 3000 ms. `extra` lines go
// into its sentinel.conf (the TLS settings it reaches a TLS primary with, say).
class SentinelProcess {
 public:
  SentinelProcess(const std::string& master, int primary_port, int quorum,
                  const std::string& extra = "");

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  RedisClient client() const { return RedisClient(port_); }
  std::string log() const { return process_->log(); }

 private:
  TempDir dir_;
  int port_;
  std::unique_ptr<Process> process_;
};

}  // namespace santral::test
