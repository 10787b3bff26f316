#include "tests/support/tls_client.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>

namespace santral::test {
namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using boost::system::error_code;

namespace {

std::vector<std::string> to_vector(std::initializer_list<std::string_view> args) {
  std::vector<std::string> out;
  for (auto a : args) out.emplace_back(a);
  return out;
}

std::string encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// One RESP2 reply from `in` at `at`; nullopt when it has not all arrived. Advances `at`.
std::optional<Reply> parse(const std::string& in, std::size_t& at) {
  if (at >= in.size()) return std::nullopt;
  auto eol = in.find("\r\n", at);
  if (eol == std::string::npos) return std::nullopt;
  char kind = in[at];
  std::string line = in.substr(at + 1, eol - at - 1);
  std::size_t next = eol + 2;
  Reply reply;
  switch (kind) {
    case '+':
      reply.type = Reply::Type::Status;
      reply.str = line;
      break;
    case '-':
      reply.type = Reply::Type::Error;
      reply.str = line;
      break;
    case ':':
      reply.type = Reply::Type::Integer;
      reply.integer = std::stoll(line);
      break;
    case '$': {
      long long length = std::stoll(line);
      if (length < 0) {
        reply.type = Reply::Type::Nil;
        break;
      }
      if (in.size() < next + static_cast<std::size_t>(length) + 2) return std::nullopt;
      reply.type = Reply::Type::String;
      reply.str = in.substr(next, static_cast<std::size_t>(length));
      next += static_cast<std::size_t>(length) + 2;
      break;
    }
    case '*': {
      long long count = std::stoll(line);
      if (count < 0) {
        reply.type = Reply::Type::Nil;
        break;
      }
      reply.type = Reply::Type::Array;
      for (long long i = 0; i < count; ++i) {
        auto element = parse(in, next);
        if (!element) return std::nullopt;
        reply.elements.push_back(std::move(*element));
      }
      break;
    }
    default:
      throw std::runtime_error("not a RESP2 reply: " + in.substr(at, 80));
  }
  at = next;
  return reply;
}

}  // namespace

struct TlsClient::Impl {
  asio::io_context io;
  ssl::context context{ssl::context::tls_client};
  std::optional<ssl::stream<asio::ip::tcp::socket>> stream;
  TlsClientOptions options;
  std::string in;  // received, not yet parsed

  // Runs one asynchronous operation started by `start` for at most the options' timeout.
  // A timed-out read is cancelled and the connection stays usable; any other timed-out
  // operation closes it.
  template <class Start>
  std::pair<error_code, std::size_t> run(Start start, int timeout_ms, bool keep_open = false) {
    error_code result = asio::error::would_block;
    std::size_t transferred = 0;
    start([&](error_code ec, std::size_t n = 0) {
      result = ec;
      transferred = n;
    });
    io.restart();
    io.run_for(std::chrono::milliseconds(timeout_ms));
    if (result == asio::error::would_block) {
      error_code ignored;
      stream->lowest_layer().cancel(ignored);
      if (!keep_open) stream->lowest_layer().close(ignored);
      io.restart();
      io.run();
      result = asio::error::timed_out;
    }
    return {result, transferred};
  }

  std::string connect(int port) {
    context.set_verify_mode(options.verify ? ssl::verify_peer : ssl::verify_none);
    if (!options.only_protocol.empty()) {
      int version = options.only_protocol == "TLSv1.2"   ? TLS1_2_VERSION
                    : options.only_protocol == "TLSv1.3" ? TLS1_3_VERSION
                                                         : 0;
      if (version == 0) return "unknown protocol " + options.only_protocol;
      SSL_CTX_set_min_proto_version(context.native_handle(), version);
      SSL_CTX_set_max_proto_version(context.native_handle(), version);
    }
    error_code ec;
    if (!options.ca_file.empty()) {
      context.load_verify_file(options.ca_file.string(), ec);
      if (ec) return "cannot load " + options.ca_file.string() + ": " + ec.message();
    }
    if (!options.cert_file.empty()) {
      context.use_certificate_chain_file(options.cert_file.string(), ec);
      if (!ec) context.use_private_key_file(options.key_file.string(), ssl::context::pem, ec);
      if (ec) return "cannot load " + options.cert_file.string() + ": " + ec.message();
    }
    stream.emplace(io, context);
    SSL* handle = stream->native_handle();
    error_code not_an_address;
    asio::ip::make_address(options.server_name, not_an_address);
    if (options.server_name.empty()) {
    } else if (!not_an_address) {
      // An address is checked against the certificate's IP entries and is never sent as SNI.
      if (options.verify)
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(handle), options.server_name.c_str());
    } else {
      SSL_set_tlsext_host_name(handle, options.server_name.c_str());
      if (options.verify) SSL_set1_host(handle, options.server_name.c_str());
    }
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"),
                                     static_cast<unsigned short>(port));
    auto [connected, unused] = run(
        [&](auto done) {
          stream->lowest_layer().async_connect(endpoint, [done](error_code e) mutable { done(e); });
        },
        options.timeout_ms);
    if (connected)
      return "cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + connected.message();
    auto [handshake, unused2] = run(
        [&](auto done) {
          stream->async_handshake(ssl::stream_base::client,
                                  [done](error_code e) mutable { done(e); });
        },
        options.timeout_ms);
    if (!handshake) return "";
    std::string why =
        "TLS handshake with 127.0.0.1:" + std::to_string(port) + " failed: " + handshake.message();
    long verified = SSL_get_verify_result(handle);
    if (verified != X509_V_OK)
      why += std::string(" (") + X509_verify_cert_error_string(verified) + ")";
    return why;
  }

  void write(const std::string& bytes) {
    auto [ec, n] = run(
        [&](auto done) {
          asio::async_write(*stream, asio::buffer(bytes),
                            [done](error_code e, std::size_t got) mutable { done(e, got); });
        },
        options.timeout_ms);
    if (ec) throw std::runtime_error("TLS write failed: " + ec.message());
  }

  // Reads more bytes into `in`; the error when none came.
  error_code read_more(int timeout_ms) {
    char buffer[65536];
    auto [ec, n] = run(
        [&](auto done) {
          stream->async_read_some(asio::buffer(buffer),
                                  [done](error_code e, std::size_t got) mutable { done(e, got); });
        },
        timeout_ms, true);
    in.append(buffer, n);
    return n > 0 ? error_code{} : ec;
  }
};

TlsClient::TlsClient(int port, TlsClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  auto error = impl_->connect(port);
  if (!error.empty()) throw std::runtime_error(error);
}

TlsClient::~TlsClient() = default;
TlsClient::TlsClient(TlsClient&&) noexcept = default;
TlsClient& TlsClient::operator=(TlsClient&&) noexcept = default;

std::string TlsClient::handshake_error(int port, const TlsClientOptions& options) {
  Impl impl;
  impl.options = options;
  return impl.connect(port);
}

void TlsClient::append(const std::vector<std::string>& args) {
  impl_->write(encode(args));
}

void TlsClient::append(std::initializer_list<std::string_view> args) {
  append(to_vector(args));
}

Reply TlsClient::get_reply() {
  for (;;) {
    std::size_t at = 0;
    if (auto reply = parse(impl_->in, at)) {
      impl_->in.erase(0, at);
      return *reply;
    }
    auto ec = impl_->read_more(impl_->options.timeout_ms);
    if (ec) throw std::runtime_error("TLS connection error: " + ec.message());
  }
}

Reply TlsClient::command(const std::vector<std::string>& args) {
  append(args);
  return get_reply();
}

Reply TlsClient::command(std::initializer_list<std::string_view> args) {
  return command(to_vector(args));
}

void TlsClient::send_raw(std::string_view bytes) {
  impl_->write(std::string(bytes));
}

bool TlsClient::wait_closed(std::string& received, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    auto ec = impl_->read_more(static_cast<int>(left));
    received += impl_->in;
    impl_->in.clear();
    if (ec == asio::error::timed_out) return false;
    if (ec) return true;  // EOF, a reset, or a TLS alert: the server is gone
  }
}

bool answers_tls_ping(int port, const TlsClientOptions& options) {
  try {
    auto quick = options;
    quick.timeout_ms = 500;
    auto reply = TlsClient(port, quick).command({"PING"});
    return reply.str == "PONG" || (reply.is_error() && reply.str.rfind("NOAUTH", 0) == 0);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace santral::test
