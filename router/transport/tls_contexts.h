#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "config/config.h"

namespace santral::router {

// The OpenSSL contexts made from the config's certificate files. Made at start and at every
// reload (so a reload, or SIGHUP, takes renewed certificates); a connection keeps the context
// it was opened with, and new handshakes use the new one.
struct TlsContexts {
  std::shared_ptr<boost::asio::ssl::context> clients;  // the TLS listener's (and admin's); or null
  std::shared_ptr<boost::asio::ssl::context> shards;   // for shards with `tls: true`; or null
  std::string shard_server_name;                       // backend.tls.server_name
  bool verify_shards = true;
};
using TlsContextsPtr = std::shared_ptr<const TlsContexts>;

struct TlsContextsMade {
  TlsContextsPtr contexts;  // null when `error` says why
  std::string error;        // names the config key and OpenSSL's reason
};
TlsContextsMade make_tls_contexts(const config::Config& config);
// The shards' side alone (backend.tls), for a control thread's short calls to `tls: true`
// shards (router/backend/blocking_call.h).
TlsContextsMade make_shard_contexts(const config::TlsClientSettings& settings);

// The contexts in force, process-wide: put by the server at start and by every reload, taken
// when a connection opens (never on the request path).
TlsContextsPtr tls_in_force();
void put_tls_in_force(TlsContextsPtr contexts);

// Whether the server at `address` (a shard's primary or replica) has `tls: true`.
bool speaks_tls(const config::Config& config, const config::Endpoint& address);

// Before a TLS handshake with shard `host`: SNI, and the name its certificate must carry.
void expect_shard_name(SSL* ssl, const TlsContexts& contexts, const std::string& host);

// Why a handshake failed, in OpenSSL's words: the certificate check's verdict when there is
// one ("certificate has expired", "hostname mismatch"), else the error's.
std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec);

}  // namespace santral::router
