// For unit tests of one shard connection (router/backend/) against a ScriptedShard
// (tests/support/scripted_shard.h): an io_context run until a condition holds, the connection
// opened on it, and a sink that keeps each reply with the slot it was for.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"
#include "router/metrics/stats.h"

namespace santral::test {

// Each reply as it reached the sink, with the slot it was for.
class ReplyLog final : public router::ReplySink {
 public:
  void deliver(std::uint64_t slot, std::uint32_t, std::string_view reply) override {
    got.emplace_back(slot, std::string(reply));
  }
  std::vector<std::pair<std::uint64_t, std::string>> got;
};
using ReplyLogPtr = boost::intrusive_ptr<ReplyLog>;

// The io_context outlives everything that runs on it.
struct ShardLoop {
  boost::asio::io_context io;
  router::ShardStats stats;

  template <typename Done>
  bool run_until(Done done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < until) {
      io.restart();
      io.run_for(std::chrono::milliseconds(5));
    }
    return done();
  }

  // A connection to 127.0.0.1:`port` as shard "s0": requests time out after 200 ms (when the
  // test checks deadlines), and a failure reconnects without ever marking the shard down.
  router::BackendConnectionPtr open(int port,
                                    router::ConnectionRole role = router::ConnectionRole::Shared) {
    auto config = std::make_shared<config::Config>();
    config->timeouts.request = std::chrono::milliseconds(200);
    config->timeouts.connect = std::chrono::seconds(30);
    config->health.failures = 100;
    router::BackendTarget target{0, "s0", {"127.0.0.1", static_cast<std::uint16_t>(port)}, {}};
    router::BackendConnection::Options options;
    options.role = role;
    return router::BackendConnection::open(io, std::move(target), std::move(config), stats,
                                           options);
  }
};

}  // namespace santral::test
