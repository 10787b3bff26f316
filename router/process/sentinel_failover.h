#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/process/fleet_sync.h"
#include "router/process/sentinel_follow.h"
#include "router/resharding/move_driver.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/shared_state.h"
#include "router/runtime/write_refusals.h"

namespace santral::router {

// The shards that name a `sentinel_master` serve from the primary Sentinel elected: what
// SentinelFollow hears is put in force as a topology with the same placement (on the
// server's thread), or, while a move is under way, once it has ended.
//
// Before a new primary is put in force, its lineage is checked against the old one as last
// read (router/backend/primary_lineage.h). One that lacks the old primary's writes is
// reported (log, INFO, SANTRAL SHARDMAP, GET /shards) and, with failover.on_lost_writes:
// refuse, writes to the shard are refused on every worker, from before the first request
// reaches it, until SANTRAL FAILOVER ACCEPT <shard>.
class SentinelFailover {
 public:
  // Hands the shards whose writes are refused to every worker (in order with what follows).
  using PublishRefusals = std::function<void(std::shared_ptr<const WriteRefusals>)>;

  SentinelFailover(boost::asio::io_context& io, RouterHost& host, SharedState& shared,
                   PublishRefusals publish)
      : io_(io), host_(host), shared_(shared), publish_(std::move(publish)) {}

  void set_driver(MoveDriver& driver) { driver_ = &driver; }
  // Asks the sentinels about the masters `config` (the config in force) names; none: stops.
  // A config that says failover.on_lost_writes: accept lets the refused writes go.
  void watch(const config::Config& config);
  void stop() { stopped_ = true; }
  // SANTRAL FAILOVER ACCEPT <shard>: the operator takes the loss; writes to it go again.
  ControlPlane::FailoverAnswer accept(const std::string& shard);

 private:
  void heard(const std::string& master, const SentinelView& view);
  // Judges the new primary of `shard` against the old one at `from`, before it is put in force.
  void check_lineage(const std::string& shard, const std::string& from, const SentinelView& view);
  void publish_refusals();

  boost::asio::io_context& io_;
  RouterHost& host_;
  SharedState& shared_;
  PublishRefusals publish_;
  MoveDriver* driver_ = nullptr;
  std::unique_ptr<SentinelFollow> follow_;  // while the config names a sentinel_master
  bool waits_for_move_ = false;             // logged once per move
  bool stopped_ = false;
};

}  // namespace santral::router
