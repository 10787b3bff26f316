#include "router/backend/shard_dial.h"

#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>

#include "router/transport/tls_contexts.h"

namespace santral::router {

namespace asio = boost::asio;
using asio::ip::tcp;

void ShardDial::start(Stream& stream, const std::shared_ptr<const config::Config>& config,
                      const BackendTarget& target, bool quiet, Done done) {
  started_ = std::chrono::steady_clock::now();
  auto attempt = ++attempt_;
  resolver_.async_resolve(
      target.address.host, std::to_string(target.address.port),
      [this, &stream, &config, &target, quiet, attempt, done = std::move(done)](
          boost::system::error_code ec, const tcp::resolver::results_type& results) mutable {
        if (attempt != attempt_) return;
        if (ec) return done("cannot resolve " + target.address.host + ": " + ec.message());
        asio::async_connect(
            stream.socket(), results,
            [this, &stream, &config, &target, quiet, attempt, done = std::move(done)](
                boost::system::error_code ec, const tcp::endpoint&) mutable {
              if (attempt != attempt_) return;
              if (ec) return done(ec.message());
              start_tls(stream, config, target, quiet, std::move(done));
            });
      });
}

void ShardDial::cancel() {
  ++attempt_;
  resolver_.cancel();
}

void ShardDial::start_tls(Stream& stream, const std::shared_ptr<const config::Config>& config,
                          const BackendTarget& target, bool quiet, Done done) {
  stream.end_tls();
  if (!speaks_tls(*config, target.address)) return done("");
  auto contexts = tls_in_force();
  if (!contexts || !contexts->shards) return done("TLS is not set up (backend.tls)");
  auto& tls = stream.start_tls(contexts->shards);
  expect_shard_name(tls.native_handle(), *contexts, target.address.host);
  stream.async_handshake(
      asio::ssl::stream_base::client, [this, &stream, &target, quiet, attempt = attempt_,
                                       done = std::move(done)](boost::system::error_code ec) {
        if (attempt != attempt_) return;
        if (!ec) return done("");
        std::string why =
            "TLS handshake failed: " + handshake_failure(stream.tls_stream()->native_handle(), ec);
        if (!quiet)  // once, not on every retry
          spdlog::error("shard '{}' ({}): {}", target.shard_name, target.address.text(), why);
        done(why);
      });
}

}  // namespace santral::router
