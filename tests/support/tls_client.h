#pragma once

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/redis_client.h"

namespace santral::test {

// How a TlsClient connects: whom it trusts, what it presents, what it checks.
struct TlsClientOptions {
  std::filesystem::path ca_file;  // trusted CA certificates (PEM); empty: none
  // A client certificate for mutual TLS; empty: none is presented.
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::string server_name = "localhost";  // sent as SNI and, with `verify`, checked
  bool verify = true;         // the server's certificate chain and host name; off: anything goes
  int timeout_ms = 10000;     // for each connect, handshake, write and read
  std::string only_protocol;  // "TLSv1.2" or "TLSv1.3": offer just that version; empty: any
};

// A small synchronous Redis client over TLS (Boost.Asio's SSL stream on OpenSSL), for tests that
// talk to a TLS listener of Santral or to a TLS-only redis-server. hiredis 0.14 has no TLS.
// Replies are RESP2 and come back as the same Reply as RedisClient's. Connection and I/O
// failures throw std::runtime_error; a failed handshake's message carries OpenSSL's reason and,
// when verification failed, X509's (e.g. "certificate has expired", "hostname mismatch").
class TlsClient {
 public:
  explicit TlsClient(int port, TlsClientOptions options = {});
  ~TlsClient();
  TlsClient(TlsClient&&) noexcept;
  TlsClient& operator=(TlsClient&&) noexcept;

  // Connects and handshakes; "" when that worked, else why not. Note that with TLS 1.3 a server
  // that rejects the client's certificate says so only after the handshake, on the first read.
  static std::string handshake_error(int port, const TlsClientOptions& options);

  Reply command(const std::vector<std::string>& args);
  Reply command(std::initializer_list<std::string_view> args);

  // Pipelining, as RedisClient's.
  void append(const std::vector<std::string>& args);
  void append(std::initializer_list<std::string_view> args);
  Reply get_reply();

  // Bytes as they are, e.g. half a request.
  void send_raw(std::string_view bytes);
  // Reads until the peer closes the connection (true: EOF, reset, or a TLS alert) or timeout
  // (false); `received` gets whatever arrived before.
  bool wait_closed(std::string& received, int timeout_ms = 5000);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when a Redis server on 127.0.0.1:port answers PING over TLS: PONG, or NOAUTH.
bool answers_tls_ping(int port, const TlsClientOptions& options);

}  // namespace santral::test
