#pragma once

#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/process/fleet_sync.h"
#include "router/process/sentinel_follow.h"
#include "router/resharding/move_driver.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

// The shards that name a `sentinel_master` serve from the primary Sentinel elected: what
// SentinelFollow hears is put in force as a topology with the same placement (on the
// server's thread), or, while a move is under way, once it has ended.
class SentinelFailover {
 public:
  SentinelFailover(boost::asio::io_context& io, RouterHost& host, SharedState& shared)
      : io_(io), host_(host), shared_(shared) {}

  void set_driver(MoveDriver& driver) { driver_ = &driver; }
  // Asks the sentinels about the masters `config` (the config in force) names; none: stops.
  void watch(const config::Config& config);
  void stop() { stopped_ = true; }

 private:
  void heard(const std::string& master, const SentinelView& view);

  boost::asio::io_context& io_;
  RouterHost& host_;
  SharedState& shared_;
  MoveDriver* driver_ = nullptr;
  std::unique_ptr<SentinelFollow> follow_;  // while the config names a sentinel_master
  bool waits_for_move_ = false;             // logged once per move
  bool stopped_ = false;
};

}  // namespace santral::router
