#include "router/worker.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "router/client_session.h"

namespace santral::router {

namespace asio = boost::asio;

Worker::Worker(unsigned index, const config::Config& config,
               std::shared_ptr<const config::ShardMap> shard_map, SharedState& shared)
    : index_(index),
      config_(config),
      shard_map_(std::move(shard_map)),
      shared_(shared),
      work_(io_.get_executor()),
      ticker_(io_) {
  for (std::size_t s = 0; s < shard_map_->shard_count(); ++s) {
    const auto& shard = shard_map_->shard(s);
    auto& connections = backends_.emplace_back();
    for (std::uint32_t c = 0; c < config_.backend.connections_per_shard; ++c)
      connections.push_back(std::make_unique<BackendConnection>(
          io_, BackendTarget{s, shard.name, shard.address}, config_));
  }
}

Worker::~Worker() { stop(); }

void Worker::start() {
  asio::post(io_, [this] {
    for (auto& connections : backends_)
      for (auto& connection : connections) connection->start();
    tick();
  });
  thread_ = std::thread([this] { io_.run(); });
}

void Worker::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    ticker_.cancel();
    std::vector<ClientSession*> open;
    for (auto& [id, session] : sessions_) open.push_back(session);
    for (ClientSession* session : open) session->close();
    for (auto& connections : backends_)
      for (auto& connection : connections) connection->stop();
    work_.reset();
    io_.stop();
  });
  thread_.join();
}

void Worker::adopt(asio::ip::tcp::socket socket, std::uint64_t client_id) {
  auto session = boost::intrusive_ptr<ClientSession>(
      new ClientSession(*this, std::move(socket), client_id));
  sessions_.emplace(client_id, session.get());
  session->start();
}

void Worker::forget(ClientSession& session) {
  if (sessions_.erase(session.state().id) > 0) shared_.connected_clients.fetch_sub(1);
}

BackendConnection& Worker::backend(std::size_t shard, std::uint64_t client_id) {
  auto& connections = backends_[shard];
  return *connections[client_id % connections.size()];
}

// Deadlines are checked on a coarse clock: one timer per worker instead of one per request.
void Worker::tick() {
  auto now = std::chrono::steady_clock::now();
  for (auto& connections : backends_)
    for (auto& connection : connections) connection->check_deadlines(now);
  auto period = std::clamp(config_.timeouts.request / 10, std::chrono::milliseconds(5),
                           std::chrono::milliseconds(100));
  ticker_.expires_after(period);
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

}  // namespace santral::router
