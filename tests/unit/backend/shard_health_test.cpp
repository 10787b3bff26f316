// When a shard connection marks its shard down, backs off and takes it back
// (router/backend/shard_health.h), on a clock of the test's own.
#include <catch2/catch.hpp>

#include <chrono>

#include "config/config.h"
#include "router/backend/shard_health.h"

using namespace santral::router;
namespace config = santral::config;
using namespace std::chrono_literals;

namespace {

config::Config settings() {
  config::Config config;
  config.health.failures = 3;
  config.health.interval = 1000ms;
  config.timeouts.reconnect_min = 100ms;
  config.timeouts.reconnect_max = 700ms;
  return config;
}

const ShardHealth::Clock::time_point t0{};

}  // namespace

TEST_CASE("shard health: health.failures failures in a row mark the shard down") {
  ShardHealth health(settings());
  CHECK_FALSE(health.failed(true));
  CHECK_FALSE(health.failed(true));
  CHECK_FALSE(health.failed(false));  // the router's own fence: not the shard's failure
  CHECK(health.failures() == 2);
  CHECK(health.failed(true));
  CHECK(health.eject("3 failures in a row"));
  CHECK(health.ejected());
  CHECK(health.down_reason() == "3 failures in a row");
  CHECK_FALSE(health.eject("again"));  // said once
  CHECK(health.down_reason() == "again");
  CHECK(health.failed(false));  // once down, every failure keeps it down
}

TEST_CASE("shard health: an answer ends the failures in a row, a new connection does not") {
  ShardHealth health(settings());
  health.failed(true);
  health.failed(true);
  health.connected(t0);
  CHECK(health.failures() == 2);
  CHECK(health.failed(true));
  ShardHealth answered(settings());
  answered.failed(true);
  answered.failed(true);
  answered.answered(t0);
  CHECK(answered.failures() == 0);
  CHECK_FALSE(answered.failed(true));
}

TEST_CASE(
    "shard health: a down shard is retried after reconnect_min, doubling up to reconnect_max") {
  ShardHealth health(settings());
  health.eject("down");
  CHECK(health.next_backoff() == 100ms);
  CHECK(health.next_backoff() == 200ms);
  CHECK(health.next_backoff() == 400ms);
  CHECK(health.next_backoff() == 700ms);
  CHECK(health.next_backoff() == 700ms);
  // Taken back by an answered PING: the next time starts from reconnect_min again.
  CHECK(health.probe_answered());
  CHECK_FALSE(health.ejected());
  CHECK(health.down_reason().empty());
  CHECK_FALSE(health.probe_answered());  // an ordinary health PING changes nothing
  health.eject("down again");
  CHECK(health.next_backoff() == 100ms);
}

TEST_CASE("shard health: an idle connection owes a PING every health.interval, not while down") {
  ShardHealth health(settings());
  health.connected(t0);
  CHECK_FALSE(health.probe_due(t0 + 1000ms));
  CHECK(health.probe_due(t0 + 1001ms));
  CHECK_FALSE(health.probe_due(t0 + 1500ms));  // the PING counts like a request
  CHECK(health.probe_due(t0 + 2002ms));
  health.answered(t0 + 2500ms);
  CHECK_FALSE(health.probe_due(t0 + 3400ms));
  health.eject("down");
  CHECK_FALSE(health.probe_due(t0 + 9000ms));
}

TEST_CASE("shard health: a reload's settings apply from the next failure") {
  ShardHealth health(settings());
  health.failed(true);
  auto reloaded = settings();
  reloaded.health.failures = 2;
  reloaded.timeouts.reconnect_min = 50ms;
  health.configure(reloaded);
  CHECK(health.failed(true));
  health.eject("down");
  CHECK(health.next_backoff() == 50ms);
}
