#include "router/transport/tls_contexts.h"

#include <mutex>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

namespace santral::router {

namespace ssl = boost::asio::ssl;

namespace {

std::string openssl_reason() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "OpenSSL gave no reason";
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : "error " + std::to_string(code);
}

// Versions, TLS 1.2 ciphers and TLS 1.3 suites; empty on success, else what is wrong.
std::string restrict_protocols(SSL_CTX* context, const config::TlsProtocols& protocols,
                               const std::string& key) {
  int lowest = TLS1_2_VERSION;
  int highest = TLS1_3_VERSION;
  if (!protocols.versions.empty()) {
    lowest = TLS1_3_VERSION;
    highest = TLS1_2_VERSION;
    for (const auto& version : protocols.versions) {
      int number = version == "TLSv1.2" ? TLS1_2_VERSION : TLS1_3_VERSION;
      lowest = std::min(lowest, number);
      highest = std::max(highest, number);
    }
  }
  SSL_CTX_set_min_proto_version(context, lowest);
  SSL_CTX_set_max_proto_version(context, highest);
  if (!protocols.ciphers.empty() &&
      SSL_CTX_set_cipher_list(context, protocols.ciphers.c_str()) != 1)
    return key + ".ciphers: no cipher of '" + protocols.ciphers + "' is known: " + openssl_reason();
  if (!protocols.ciphersuites.empty() &&
      SSL_CTX_set_ciphersuites(context, protocols.ciphersuites.c_str()) != 1)
    return key + ".ciphersuites: no suite of '" + protocols.ciphersuites +
           "' is known: " + openssl_reason();
  return {};
}

// A certificate chain and its key; empty on success.
std::string load_certificate(ssl::context& context, const std::filesystem::path& cert,
                             const std::filesystem::path& key, const std::string& prefix) {
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert.string(), ec);
  if (ec) return prefix + ".cert_file: cannot use " + cert.string() + ": " + ec.message();
  context.use_private_key_file(key.string(), ssl::context::pem, ec);
  if (ec) return prefix + ".key_file: cannot use " + key.string() + ": " + ec.message();
  if (SSL_CTX_check_private_key(context.native_handle()) != 1)
    return prefix + ".key_file: " + key.string() + " is not the key of " + cert.string();
  return {};
}

std::string make_clients_context(const config::TlsServerSettings& settings,
                                 std::shared_ptr<ssl::context>& out) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                       SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (auto error = restrict_protocols(context->native_handle(), settings.protocols, "tls");
      !error.empty())
    return error;
  if (auto error = load_certificate(*context, settings.cert_file, settings.key_file, "tls");
      !error.empty())
    return error;
  boost::system::error_code ec;
  if (!settings.ca_file.empty()) {
    context->load_verify_file(settings.ca_file.string(), ec);
    if (ec) return "tls.ca_file: cannot use " + settings.ca_file.string() + ": " + ec.message();
  }
  switch (settings.client_auth) {
    case config::ClientAuth::None:
      context->set_verify_mode(ssl::verify_none);
      break;
    case config::ClientAuth::Optional:
      context->set_verify_mode(ssl::verify_peer);
      break;
    case config::ClientAuth::Required:
      context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      break;
  }
  // Sessions resumed by clients with certificates need a context id.
  static constexpr unsigned char kSessionContext[] = "santral";
  SSL_CTX_set_session_id_context(context->native_handle(), kSessionContext,
                                 sizeof kSessionContext - 1);
  out = std::move(context);
  return {};
}

std::string make_shards_context(const config::TlsClientSettings& settings,
                                std::shared_ptr<ssl::context>& out) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  if (auto error = restrict_protocols(context->native_handle(), settings.protocols, "backend.tls");
      !error.empty())
    return error;
  boost::system::error_code ec;
  if (settings.ca_file.empty()) {
    context->set_default_verify_paths(ec);
  } else {
    context->load_verify_file(settings.ca_file.string(), ec);
  }
  if (ec)
    return "backend.tls.ca_file: cannot use " +
           (settings.ca_file.empty() ? std::string("the system's CA store")
                                     : settings.ca_file.string()) +
           ": " + ec.message();
  if (!settings.cert_file.empty())
    if (auto error =
            load_certificate(*context, settings.cert_file, settings.key_file, "backend.tls");
        !error.empty())
      return error;
  context->set_verify_mode(settings.verify ? ssl::verify_peer : ssl::verify_none);
  out = std::move(context);
  return {};
}

}  // namespace

TlsContextsMade make_tls_contexts(const config::Config& config) {
  auto contexts = std::make_shared<TlsContexts>();
  if (config.tls.enabled)
    if (auto error = make_clients_context(config.tls, contexts->clients); !error.empty())
      return {nullptr, error};
  bool any_shard = false;
  for (const auto& shard : config.shards) any_shard = any_shard || shard.tls;
  if (any_shard)
    if (auto error = make_shards_context(config.backend.tls, contexts->shards); !error.empty())
      return {nullptr, error};
  contexts->shard_server_name = config.backend.tls.server_name;
  contexts->verify_shards = config.backend.tls.verify;
  return {std::move(contexts), {}};
}

TlsContextsMade make_shard_contexts(const config::TlsClientSettings& settings) {
  auto contexts = std::make_shared<TlsContexts>();
  if (auto error = make_shards_context(settings, contexts->shards); !error.empty())
    return {nullptr, error};
  contexts->shard_server_name = settings.server_name;
  contexts->verify_shards = settings.verify;
  return {std::move(contexts), {}};
}

namespace {
std::mutex in_force_lock;
TlsContextsPtr in_force;
}  // namespace

TlsContextsPtr tls_in_force() {
  std::lock_guard lock(in_force_lock);
  return in_force;
}

void put_tls_in_force(TlsContextsPtr contexts) {
  std::lock_guard lock(in_force_lock);
  in_force = std::move(contexts);
}

bool speaks_tls(const config::Config& config, const config::Endpoint& address) {
  for (const auto& shard : config.shards) {
    if (!shard.tls) continue;
    if (shard.address == address) return true;
    for (const auto& replica : shard.replicas)
      if (replica == address) return true;
  }
  return false;
}

void expect_shard_name(SSL* ssl, const TlsContexts& contexts, const std::string& host) {
  const std::string& name = contexts.shard_server_name.empty() ? host : contexts.shard_server_name;
  boost::system::error_code ec;
  boost::asio::ip::make_address(name, ec);
  bool address = !ec;
  if (!address) SSL_set_tlsext_host_name(ssl, name.c_str());  // SNI never carries an address
  if (!contexts.verify_shards) return;
  if (address) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
  } else {
    SSL_set1_host(ssl, name.c_str());
  }
}

std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec) {
  if (ssl != nullptr) {
    long verdict = SSL_get_verify_result(ssl);
    if (verdict != X509_V_OK)
      return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verdict);
  }
  if (ec == boost::asio::error::eof || ec == ssl::error::stream_truncated)
    return "the peer closed the connection during the TLS handshake";
  return ec.message();
}

}  // namespace santral::router
