#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "router/backend/reply_sink.h"

namespace santral::router {

// The scripts (EVAL, FCALL, ...) every worker has sent to a shard and not heard back from, by
// shard name. A shard running one is busy to everyone else, as one Redis is: past its
// busy-reply-threshold it answers BUSY; so a PING while a script has been out a while is asked
// of that shard instead of answered by Santral (router/routes/broadcast_route.cpp).
class ScriptsInFlight {
 public:
  using Clock = std::chrono::steady_clock;

  void started(const std::string& shard, Clock::time_point at);
  void ended(const std::string& shard, Clock::time_point at);
  // Read once per PING: nothing else is looked at while no script is out.
  bool any() const { return count_.load(std::memory_order_relaxed) > 0; }
  // The shards with a script sent before `before`.
  std::vector<std::string> running_since(Clock::time_point before) const;

 private:
  std::atomic<std::size_t> count_{0};
  mutable std::mutex lock_;
  std::map<std::string, std::multiset<Clock::time_point>> by_shard_;
};

// The process's: every worker's scripts.
ScriptsInFlight& scripts_in_flight();

// A script's reply on its way to `sink`: the shard has one script fewer when it arrives (or
// when the request is dropped without one).
class ScriptReply final : public ReplySink {
 public:
  ScriptReply(ReplySinkPtr sink, ScriptsInFlight& scripts, std::string shard);
  ~ScriptReply() override { end(); }
  void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) override {
    end();
    sink_->deliver(slot, fragment, reply);
  }
  void connection_lost(std::size_t shard) override { sink_->connection_lost(shard); }

 private:
  void end();

  ReplySinkPtr sink_;
  ScriptsInFlight& scripts_;  // the process's: it outlives every connection
  std::string shard_;
  ScriptsInFlight::Clock::time_point started_;
  bool ended_ = false;
};

}  // namespace santral::router
