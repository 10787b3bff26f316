#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

// The santral binary built by this tree, serving on a free 127.0.0.1 port.
class SantralProcess {
 public:
  // `config_yaml` is a whole Santral config without `listen:`; a `listen:` line for a free
  // port is added in front of it.
  explicit SantralProcess(const std::string& config_yaml, std::vector<std::string> extra_args = {});
  // Serves an existing config file (Santral's or a nutcracker.yml) that listens on `port`.
  SantralProcess(const std::filesystem::path& config_file, int port,
                 std::vector<std::string> extra_args = {});

  // A config listing `shards` as shard0..shardN-1, plus `extra_yaml` (top-level keys).
  static std::string config_for(const std::vector<const RedisServer*>& shards,
                                const std::string& extra_yaml = "");

  int port() const { return port_; }
  RedisClient client(int timeout_ms = 10000) const { return RedisClient(port_, timeout_ms); }
  Process& process() { return *process_; }
  std::string log() const { return process_->log(); }
  const std::filesystem::path& config_path() const { return config_path_; }

 private:
  void launch(std::vector<std::string> extra_args);

  int port_;
  TempDir dir_;
  std::filesystem::path config_path_;
  std::unique_ptr<Process> process_;
};

// Runs `santral <args>` to completion and returns its exit code and combined output.
struct CommandResult {
  int exit_code;
  std::string output;
};
CommandResult run_santral(const std::vector<std::string>& args);

}  // namespace santral::test
