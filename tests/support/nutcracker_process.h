#pragma once

#include <memory>
#include <string>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

// twemproxy (`nutcracker`) started with a given nutcracker.yml text, for compatibility tests.
class NutcrackerProcess {
 public:
  // `config_yaml` is written as-is; `port` must be the port its pool listens on.
  NutcrackerProcess(const std::string& config_yaml, int port);

  int port() const { return port_; }
  RedisClient client() const { return RedisClient(port_); }
  const std::filesystem::path& config_path() const { return config_path_; }

 private:
  int port_;
  TempDir dir_;
  std::filesystem::path config_path_;
  std::unique_ptr<Process> process_;
};

}  // namespace santral::test
