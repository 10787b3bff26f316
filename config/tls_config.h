#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace santral::config {

// Whether a TLS client must show a certificate (Redis's tls-auth-clients no | optional | yes).
enum class ClientAuth { None, Optional, Required };

// What both sides of TLS may restrict; empty: OpenSSL's defaults.
struct TlsProtocols {
  std::vector<std::string> versions;  // "TLSv1.2", "TLSv1.3"; empty: both
  std::string ciphers;                // TLS 1.2 cipher list (OpenSSL's syntax)
  std::string ciphersuites;           // TLS 1.3 suites
};

// `tls:` at the top: the clients' side. Relative file names are relative to the config file.
struct TlsServerSettings {
  bool enabled = false;
  std::string listen_host;  // tls.listen; empty: no TLS listener (the files may serve admin)
  std::uint16_t listen_port = 0;
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::filesystem::path ca_file;  // verifies client certificates
  ClientAuth client_auth = ClientAuth::None;
  TlsProtocols protocols;
  std::chrono::milliseconds handshake_timeout{10000};
};

// `backend: {tls: ...}`: how Santral checks the shards that have `tls: true`.
struct TlsClientSettings {
  std::filesystem::path ca_file;  // empty: the system's trusted roots
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::string server_name;  // SNI and the name checked; empty: each shard's own host
  bool verify = true;
  TlsProtocols protocols;
};

}  // namespace santral::config
