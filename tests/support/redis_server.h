#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tls_client.h"

namespace santral::test {

// How a TLS-only redis-server serves (`--port 0 --tls-port N`). Set field by field: it is
// not an aggregate, so that RedisServer({"--some-flag", "value"}) still means extra arguments.
struct RedisTls {
  explicit RedisTls() = default;
  std::filesystem::path cert_file;  // what it presents
  std::filesystem::path key_file;
  std::filesystem::path ca_file;  // whom it trusts, for client certificates
  bool auth_clients = false;      // --tls-auth-clients yes: clients must present a certificate
  // What the test's own checks (readiness, dbsize(), has_key()...) present; needed with
  // `auth_clients`. They do not verify the server's certificate: a shard with a bad one is
  // still looked at.
  std::filesystem::path client_cert_file;
  std::filesystem::path client_key_file;
};

// A real redis-server on a free 127.0.0.1 port, with no persistence, for one test. Plain by
// default; with RedisTls it serves TLS only, on port().
class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra_args = {});
  explicit RedisServer(RedisTls tls, std::vector<std::string> extra_args = {});

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool tls() const { return tls_.has_value(); }
  // A plain client; for a TLS server use tls_client().
  RedisClient client() const;
  // A TLS client with the options the fixture's own checks use (not verifying), or `options`.
  TlsClient tls_client() const;
  TlsClient tls_client(const TlsClientOptions& options) const { return TlsClient(port_, options); }

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
  bool answers() const;
  Reply command(const std::vector<std::string>& args) const;
  TlsClientOptions own_tls_options() const;

  std::optional<RedisTls> tls_;
  std::vector<std::string> extra_args_;
  int port_;
  TempDir dir_;
  std::unique_ptr<Process> process_;
};

}  // namespace santral::test
