#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

// A real redis-server on a free 127.0.0.1 port, with no persistence, for one test.
class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra_args = {});

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  RedisClient client() const { return RedisClient(port_); }

  void kill();     // SIGKILL: the shard is gone, its connections reset
  void restart();  // start again on the same port (after kill), empty
  void pause();    // SIGSTOP: the shard holds connections but answers nothing
  void resume();

  // What landed on this shard, read from the shard itself.
  long long dbsize() const;
  bool has_key(const std::string& key) const;
  // A counter from INFO commandstats (e.g. calls of "get"), 0 when the command never ran.
  long long command_calls(const std::string& command) const;

 private:
  void start();

  std::vector<std::string> extra_args_;
  int port_;
  TempDir dir_;
  std::unique_ptr<Process> process_;
};

}  // namespace santral::test
