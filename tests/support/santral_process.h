#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tls_client.h"

namespace santral::test {

// A TLS listener the config gives Santral (`tls.listen: 127.0.0.1:<port>`, written by the test),
// and how the readiness check and tls_client() talk to it.
struct SantralTls {
  int port = 0;
  TlsClientOptions client;
  bool plain_listener = true;  // false: no `listen:` line is added; Santral serves TLS only
};

// The santral binary the tests start: $SANTRAL_BINARY when set (a sanitized build's, where
// that build's ctest runs a normal build's integration test executables: tests/CMakeLists.txt,
// SANTRAL_INTEGRATION_TESTS_FROM), else the one built beside this test.
std::string santral_binary();

// The santral binary (santral_binary()), serving on a free 127.0.0.1 port.
class SantralProcess {
 public:
  // `config_yaml` is a whole Santral config without `listen:`; a `listen:` line for a free
  // port is added in front of it.
  explicit SantralProcess(const std::string& config_yaml, std::vector<std::string> extra_args = {});
  // As above, and Santral also serves TLS as `tls` says; it is ready when it answers a PING
  // there (and on the plain port, when it has one).
  SantralProcess(const std::string& config_yaml, SantralTls tls,
                 std::vector<std::string> extra_args = {});
  // Serves an existing config file (Santral's or a nutcracker.yml) that listens on `port`.
  SantralProcess(const std::filesystem::path& config_file, int port,
                 std::vector<std::string> extra_args = {});
  // When the test has failed (or is failing by an exception), prints the end of Santral's log.
  ~SantralProcess();
  SantralProcess(const SantralProcess&) = delete;
  SantralProcess& operator=(const SantralProcess&) = delete;

  // A config listing `shards` as shard0..shardN-1, plus `extra_yaml` (top-level keys).
  static std::string config_for(const std::vector<const RedisServer*>& shards,
                                const std::string& extra_yaml = "");

  int port() const { return port_; }  // the plain listener's; -1 when serving TLS only
  RedisClient client(int timeout_ms = 10000) const { return RedisClient(port_, timeout_ms); }
  int tls_port() const { return tls_ ? tls_->port : -1; }
  TlsClient tls_client() const { return TlsClient(tls_port(), tls_->client); }
  TlsClient tls_client(const TlsClientOptions& options) const {
    return TlsClient(tls_port(), options);
  }
  Process& process() { return *process_; }
  std::string log() const { return process_->log(); }
  const std::filesystem::path& config_path() const { return config_path_; }

 private:
  void launch(std::vector<std::string> extra_args);

  int port_;
  std::optional<SantralTls> tls_;
  TempDir dir_;
  std::filesystem::path config_path_;
  std::unique_ptr<Process> process_;
};

// Writes `yaml` as the config of `santral`, after its listen line (it reloads the file when
// it watches it, or on SIGHUP / SANTRAL RELOAD).
void rewrite(const SantralProcess& santral, const std::string& yaml);

// Runs `santral <args>` to completion and returns its exit code and combined output.
struct CommandResult {
  int exit_code;
  std::string output;
};
CommandResult run_santral(const std::vector<std::string>& args);

}  // namespace santral::test
