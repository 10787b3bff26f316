#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/sentinel_events.h"
#include "router/backend/sentinel_lookup.h"

namespace santral::router {

// Follows Redis Sentinel for the shards that name a `sentinel_master`. A thread of its own
// asks the sentinels what each master's primary and replicas are (ask_sentinels: a primary
// only once it answers ROLE as one) and hands each answer to `heard` on the server's
// io_context, which puts a new primary in force (Server::follow_sentinel). It asks every
// 250 ms, and at once for a master a sentinel announces an event of (+switch-master, +sdown,
// -sdown, +odown: SentinelEvents, subscribed on every sentinel), so that a switch is followed
// within milliseconds and nothing is missed while a sentinel restarts. Santral never elects;
// it follows.
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
  // A sentinel's event: the master it concerns is asked at once (events' thread).
  void hint(const std::string& sentinel, const std::string& channel, const std::string& payload);

  boost::asio::io_context& home_;
  Heard heard_;
  std::mutex lock_;  // guards what follows
  std::condition_variable wake_;
  bool stopping_ = false;
  config::SentinelSettings sentinel_;
  config::BackendOptions backend_;
  std::vector<std::string> masters_;
  std::vector<std::string> tls_masters_;  // of shards with `tls: true`: ROLE over TLS
  TlsContextsPtr tls_;
  // Masters to ask before the period is over -> the sentinel that announced the event, asked
  // first (the others may learn of a switch only a second later).
  std::map<std::string, std::string> hinted_;
  std::unique_ptr<SentinelEvents> events_;  // subscribed to sentinel_.addresses (home thread)
  std::thread thread_;
};

}  // namespace santral::router
