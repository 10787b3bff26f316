#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/sentinel_lookup.h"

namespace santral::router {

// Follows Redis Sentinel for the shards that name a `sentinel_master`. A thread of its own
// asks the sentinels every 250 ms what each master's primary and replicas are (ask_sentinels:
// a primary only once it answers ROLE as one) and hands each answer to `heard` on the
// server's io_context, which puts a new primary in force (Server::follow_sentinel). Polling
// rather than a +switch-master subscription: the same second-or-less delay, and nothing to
// miss while a sentinel restarts. Santral never elects; it follows.
class SentinelFollow {
 public:
  using Heard = std::function<void(const std::string& master, const SentinelView& view)>;
  SentinelFollow(boost::asio::io_context& home, Heard heard);
  ~SentinelFollow();
  SentinelFollow(const SentinelFollow&) = delete;
  SentinelFollow& operator=(const SentinelFollow&) = delete;

  // What to ask from now on (the config in force); no masters: it asks nothing.
  void watch(const config::Config& config);

 private:
  void run();

  boost::asio::io_context& home_;
  Heard heard_;
  std::mutex lock_;  // guards what follows
  std::condition_variable wake_;
  bool stopping_ = false;
  config::SentinelSettings sentinel_;
  config::BackendOptions backend_;
  std::vector<std::string> masters_;
  std::thread thread_;
};

}  // namespace santral::router
