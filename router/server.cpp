#include "router/server.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "config/shard_map.h"
#include "protocol/errors.h"
#include "santral/version.h"

namespace santral::router {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

const char* distribution_name(config::Distribution d) {
  switch (d) {
    case config::Distribution::Ketama:
      return "ketama";
    case config::Distribution::Modula:
      return "modula";
    case config::Distribution::Random:
      return "random";
  }
  return "?";
}

}  // namespace

Server::Server(config::Config config)
    : config_(std::move(config)), acceptor_(io_), signals_(io_, SIGINT, SIGTERM) {
  auto shard_map = std::make_shared<const config::ShardMap>(config_);
  for (unsigned i = 0; i < config_.workers; ++i)
    workers_.push_back(std::make_unique<Worker>(i, config_, shard_map, shared_));
  std::vector<Worker*> peers;
  for (auto& worker : workers_) peers.push_back(worker.get());
  for (auto& worker : workers_) worker->set_peers(peers);
}

Server::~Server() {
  for (auto& worker : workers_) worker->stop();
}

int Server::run() {
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(config_.listen.host, std::to_string(config_.listen.port), ec);
  if (ec || endpoints.empty()) {
    spdlog::critical("cannot resolve listen address {}: {}", config_.listen.text(), ec.message());
    return 1;
  }
  tcp::endpoint endpoint = *endpoints.begin();
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    spdlog::critical("cannot listen on {}: {}", config_.listen.text(), ec.message());
    return 1;
  }

  for (const auto& warning : config_.warnings)
    spdlog::warn("{}: {}", config_.source.string(), warning);
  spdlog::info(
      "santral {} listening on {} with {} worker{}; {} shard{} ({} distribution, {} hash{})",
      kVersion, config_.listen.text(), config_.workers, config_.workers == 1 ? "" : "s",
      config_.shards.size(), config_.shards.size() == 1 ? "" : "s",
      distribution_name(config_.distribution), config_.hash_name,
      config_.hash_tag.empty() ? "" : ", hash tag \"" + config_.hash_tag + "\"");
  for (const auto& shard : config_.shards)
    spdlog::info("  shard '{}' at {} (weight {})", shard.name, shard.address.text(), shard.weight);

  for (auto& worker : workers_) worker->start();
  signals_.async_wait([this](boost::system::error_code error, int signal) {
    if (error) return;
    spdlog::info("received {}; shutting down", signal == SIGINT ? "SIGINT" : "SIGTERM");
    shutdown();
  });
  accept();
  io_.run();
  for (auto& worker : workers_) worker->stop();
  spdlog::info("santral stopped");
  return 0;
}

void Server::accept() {
  Worker& worker = *workers_[next_worker_];
  next_worker_ = (next_worker_ + 1) % workers_.size();
  acceptor_.async_accept(
      worker.io(), [this, &worker](boost::system::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted) return;
        if (!ec) {
          if (shared_.connected_clients.load() >= config_.limits.max_clients) {
            shared_.rejected_clients.fetch_add(1);
            std::string reply = "-" +
                                protocol::error_message(protocol::ClientError::MaxClients,
                                                        config_.limits.max_clients) +
                                "\r\n";
            boost::system::error_code ignored;
            asio::write(socket, asio::buffer(reply), ignored);
            socket.close(ignored);
          } else {
            shared_.connected_clients.fetch_add(1);
            auto id = shared_.next_client_id.fetch_add(1);
            asio::post(worker.io(), [&worker, id, socket = std::move(socket)]() mutable {
              worker.adopt(std::move(socket), id);
            });
          }
        } else {
          spdlog::warn("accept failed: {}", ec.message());
        }
        accept();
      });
}

void Server::shutdown() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  signals_.cancel(ignored);
  io_.stop();
}

}  // namespace santral::router
