#include "router/process/sentinel_follow.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace santral::router {

namespace {

constexpr auto kPeriod = std::chrono::milliseconds(250);
constexpr auto kTimeout = std::chrono::milliseconds(500);

}  // namespace

SentinelFollow::SentinelFollow(boost::asio::io_context& home, Heard heard)
    : home_(home), heard_(std::move(heard)), thread_([this] { run(); }) {}

SentinelFollow::~SentinelFollow() {
  events_.reset();  // its thread calls hint(), which takes lock_
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SentinelFollow::watch(const config::Config& config) {
  std::vector<std::string> masters, tls_masters;
  for (const auto& shard : config.shards) {
    if (shard.sentinel_master.empty()) continue;
    masters.push_back(shard.sentinel_master);
    if (shard.tls) tls_masters.push_back(shard.sentinel_master);
  }
  TlsContextsPtr tls;
  try {
    tls = sentinel_tls(config);
  } catch (const std::exception& e) {  // checked when the config was loaded; files since gone
    spdlog::error("Sentinel: cannot check `tls: true` primaries with ROLE: {}", e.what());
  }
  bool resubscribe = false;
  {
    std::lock_guard guard(lock_);
    resubscribe = !events_ || sentinel_.addresses != config.sentinel.addresses ||
                  sentinel_.username != config.sentinel.username ||
                  sentinel_.password != config.sentinel.password;
  }
  if (resubscribe) {
    events_.reset();  // outside lock_: its thread may be in hint()
    events_ = std::make_unique<SentinelEvents>(
        config.sentinel, [this](const std::string& sentinel, const std::string& channel,
                                const std::string& payload) { hint(sentinel, channel, payload); });
  }
  {
    std::lock_guard guard(lock_);
    sentinel_ = config.sentinel;
    backend_ = config.backend;
    masters_ = std::move(masters);
    tls_masters_ = std::move(tls_masters);
    tls_ = std::move(tls);
  }
  wake_.notify_all();
}

void SentinelFollow::hint(const std::string& sentinel, const std::string& channel,
                          const std::string& payload) {
  // +switch-master: "<master> <old ip> <old port> <new ip> <new port>"; the others:
  // "<kind> <name> <ip> <port>", followed by "@ <master> <ip> <port>" unless kind is master.
  std::istringstream words(payload);
  std::vector<std::string> word{std::istream_iterator<std::string>(words), {}};
  std::string master;
  if (channel == "+switch-master" && !word.empty()) {
    master = word[0];
  } else if (word.size() >= 2 && word[0] == "master") {
    master = word[1];
  } else {
    for (std::size_t i = 0; i + 1 < word.size(); ++i)
      if (word[i] == "@") master = word[i + 1];
  }
  {
    std::lock_guard guard(lock_);
    if (std::find(masters_.begin(), masters_.end(), master) == masters_.end()) return;
    hinted_[master] = sentinel;
  }
  spdlog::info("Sentinel {} announced {} {}: asking the sentinels about '{}' now", sentinel,
               channel, payload, master);
  wake_.notify_all();
}

void SentinelFollow::run() {
  std::map<std::string, std::string> confirmed;  // master -> the primary ROLE confirmed
  // master -> its INFO replication when confirmed: every later view carries it, so that the
  // switch is judged on what it took over when promoted, whenever it is put in force.
  std::map<std::string, std::pair<std::string, std::string>> replication;
  std::unique_lock guard(lock_);
  while (!stopping_) {
    auto sentinel = sentinel_;
    auto backend = backend_;
    auto masters = masters_;
    auto tls_masters = tls_masters_;
    auto tls = tls_;
    auto hinted = std::exchange(hinted_, {});
    guard.unlock();
    for (const auto& master : masters) {
      auto asked = sentinel;
      if (auto announced = hinted.find(master); announced != hinted.end())
        std::stable_partition(
            asked.addresses.begin(), asked.addresses.end(),
            [&](const config::Endpoint& address) { return address.text() == announced->second; });
      std::string error;
      bool over_tls =
          std::find(tls_masters.begin(), tls_masters.end(), master) != tls_masters.end();
      auto view = ask_sentinels(asked, master, backend, over_tls ? tls.get() : nullptr, kTimeout,
                                error, confirmed[master]);
      if (!view) continue;
      if (view->primary.text() != confirmed[master])
        replication[master] = {view->replication, view->replication_error};
      else
        std::tie(view->replication, view->replication_error) = replication[master];
      confirmed[master] = view->primary.text();
      boost::asio::post(home_, [heard = heard_, master, view = *view] { heard(master, view); });
    }
    guard.lock();
    wake_.wait_for(guard, kPeriod, [this] { return stopping_ || !hinted_.empty(); });
  }
}

}  // namespace santral::router
