#include "router/process/sentinel_follow.h"

#include <map>

#include <boost/asio/post.hpp>

namespace santral::router {

namespace {

constexpr auto kPeriod = std::chrono::milliseconds(250);
constexpr auto kTimeout = std::chrono::milliseconds(500);

}  // namespace

SentinelFollow::SentinelFollow(boost::asio::io_context& home, Heard heard)
    : home_(home), heard_(std::move(heard)), thread_([this] { run(); }) {}

SentinelFollow::~SentinelFollow() {
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SentinelFollow::watch(const config::Config& config) {
  std::vector<std::string> masters;
  for (const auto& shard : config.shards)
    if (!shard.sentinel_master.empty()) masters.push_back(shard.sentinel_master);
  {
    std::lock_guard guard(lock_);
    sentinel_ = config.sentinel;
    backend_ = config.backend;
    masters_ = std::move(masters);
  }
  wake_.notify_all();
}

void SentinelFollow::run() {
  std::map<std::string, std::string> confirmed;  // master -> the primary ROLE confirmed
  std::unique_lock guard(lock_);
  while (!stopping_) {
    auto sentinel = sentinel_;
    auto backend = backend_;
    auto masters = masters_;
    guard.unlock();
    for (const auto& master : masters) {
      std::string error;
      auto view = ask_sentinels(sentinel, master, backend, kTimeout, error, confirmed[master]);
      if (!view) continue;
      confirmed[master] = view->primary.text();
      boost::asio::post(home_, [heard = heard_, master, view = *view] { heard(master, view); });
    }
    guard.lock();
    wake_.wait_for(guard, kPeriod, [this] { return stopping_; });
  }
}

}  // namespace santral::router
