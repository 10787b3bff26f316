#include "router/worker.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

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
      ticker_(io_),
      pool_(io_, config_, *shard_map_) {}

Worker::~Worker() {
  stop();
}

void Worker::start() {
  asio::post(io_, [this] {
    pool_.start();
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
    pool_.stop();
    work_.reset();
    io_.stop();
  });
  thread_.join();
}

void Worker::adopt(asio::ip::tcp::socket socket, std::uint64_t client_id) {
  auto session =
      boost::intrusive_ptr<ClientSession>(new ClientSession(*this, std::move(socket), client_id));
  sessions_.emplace(client_id, session.get());
  session->start();
}

void Worker::forget(ClientSession& session) {
  if (sessions_.erase(session.state().id) > 0) shared_.connected_clients.fetch_sub(1);
}

void Worker::for_each_session(const std::function<void(ClientSession&)>& visit) {
  std::vector<boost::intrusive_ptr<ClientSession>> all;
  all.reserve(sessions_.size());
  for (auto& [id, session] : sessions_) all.emplace_back(session);
  for (auto& session : all) visit(*session);
}

void Worker::remember_script(std::string_view body) {
  if (scripts_.knows(ScriptCache::sha1_hex(body))) return;
  std::string sha = scripts_.remember(body);
  for (Worker* peer : peers_) {
    if (peer == this) continue;
    asio::post(peer->io(), [peer, sha, text = std::string(body)]() mutable {
      peer->scripts().remember(std::move(sha), std::move(text));
    });
  }
}

// Deadlines are checked on a coarse clock: one timer per worker instead of one per request.
void Worker::tick() {
  pool_.check_deadlines(std::chrono::steady_clock::now());
  auto period = std::clamp(config_.timeouts.request / 10, std::chrono::milliseconds(5),
                           std::chrono::milliseconds(100));
  ticker_.expires_after(period);
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

}  // namespace santral::router
