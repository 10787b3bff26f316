#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"

namespace santral::router {

// Subscribes on every sentinel to the events that precede or announce a new primary
// (`+switch-master`, `+sdown`, `-sdown`, `+odown`) and calls `heard(sentinel, channel,
// payload)` for each, on a thread of its own. A connection that fails or closes is opened
// again after a second; a sentinel that is down is tried again the same way. What is heard is
// a hint to ask at once (router/process/sentinel_follow.h): an event may be missed while a
// sentinel restarts, and the periodic asking still finds the change.
class SentinelEvents {
 public:
  using Heard = std::function<void(const std::string& sentinel, const std::string& channel,
                                   const std::string& payload)>;
  static constexpr const char* kChannels[] = {"+switch-master", "+sdown", "-sdown", "+odown"};

  SentinelEvents(const config::SentinelSettings& sentinel, const Heard& heard);
  ~SentinelEvents();
  SentinelEvents(const SentinelEvents&) = delete;
  SentinelEvents& operator=(const SentinelEvents&) = delete;

 private:
  class Subscription;

  boost::asio::io_context io_;
  std::vector<std::shared_ptr<Subscription>> subscriptions_;
  std::thread thread_;
};

}  // namespace santral::router
