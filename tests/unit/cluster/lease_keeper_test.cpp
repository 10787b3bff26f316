// router/cluster/lease_keeper.h: how long a router may reach the shards on its lease, judged on a
// fake lease clock, round by round, from what a scripted etcd answers (no etcd process).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "router/cluster/lease_keeper.h"

namespace {

using santral::router::LeaseEtcd;
using santral::router::LeaseKeeper;
using Renewal = LeaseEtcd::Renewal;

constexpr std::int64_t ms(std::int64_t n) {
  return n * 1'000'000;
}
constexpr std::int64_t s(std::int64_t n) {
  return ms(n * 1000);
}

// Answers as scripted, each call taking the time it is given on the fake clock.
struct ScriptedEtcd : LeaseEtcd {
  explicit ScriptedEtcd(std::int64_t& clock) : now(clock) {}

  std::int64_t& now;
  Renewal renewal = Renewal::Renewed;
  std::int64_t keep_alive_takes = 0;
  std::map<std::string, std::optional<bool>> leaderless_answers;  // member -> answer
  std::int64_t leaderless_takes = 0;
  std::function<void()> meanwhile;  // what other threads do while a keepalive is under way
  int keepalives = 0;

  Renewal keep_alive(std::int64_t) override {
    ++keepalives;
    now += keep_alive_takes;
    if (meanwhile) std::exchange(meanwhile, nullptr)();
    return renewal;
  }
  std::optional<bool> leaderless(const std::string& member) override {
    now += leaderless_takes;
    return leaderless_answers.at(member);
  }
};

// A keeper on a 9 s lease (serving 6 s past a confirmation, proofs counted within 8.1 s), its
// clock starting at 1,000 s, its lease 7 taken then.
struct Fixture {
  explicit Fixture(bool serve_when_etcd_down = false)
      : keeper(settings(serve_when_etcd_down), [this] { return now; }) {
    keeper.took(7, now, false);
    keeper.serve_through(&serve_until);
  }
  static santral::config::ClusterSettings settings(bool serve_when_etcd_down) {
    santral::config::ClusterSettings settings;
    settings.name = "test";
    settings.lease_ttl = std::chrono::seconds(9);
    settings.serve_when_etcd_down = serve_when_etcd_down;
    return settings;
  }
  // One round of the keeper's thread, `after` the last.
  void round_after(std::int64_t after) {
    now += after;
    keeper.keep(etcd);
  }
  bool serving() const { return now < serve_until.load(); }

  std::int64_t start = s(1000);
  std::int64_t now = start;
  std::atomic<std::int64_t> serve_until{0};
  ScriptedEtcd etcd{now};
  LeaseKeeper keeper;
};

TEST_CASE("lease keeper: serves until 2/3 of the TTL after the last keepalive etcd answered") {
  Fixture f;
  CHECK(f.serve_until == f.start + s(6));

  f.etcd.keep_alive_takes = ms(500);
  f.round_after(ms(1500));
  // Counted from when the keepalive was asked, not from when it was answered.
  CHECK(f.serve_until == f.start + ms(1500) + s(6));

  // etcd goes silent, and no member proves it has no quorum: serving ends on time.
  f.etcd.renewal = Renewal::Unanswered;
  while (f.now < f.start + s(7)) f.round_after(ms(1500));
  CHECK(f.serve_until == f.start + ms(1500) + s(6));
  f.now = f.start + ms(7500) - 1;
  CHECK(f.serving());
  CHECK(f.keeper.fresh());
  f.now += 1;
  CHECK_FALSE(f.serving());
  CHECK_FALSE(f.keeper.fresh());

  // A keepalive answered again serves again, from when it was asked.
  f.etcd.renewal = Renewal::Renewed;
  f.round_after(ms(500));
  CHECK(f.serve_until == f.start + s(8) + s(6));
}

TEST_CASE("lease keeper: with etcd silent it serves on while a majority says it has no leader") {
  Fixture f;
  f.keeper.use_members({"a", "b", "c"});
  f.etcd.renewal = Renewal::Unanswered;
  f.etcd.keep_alive_takes = ms(300);
  f.etcd.leaderless_answers = {{"a", true}, {"b", true}, {"c", std::nullopt}};
  f.etcd.leaderless_takes = ms(10);
  // Long past the lease, each round's proof extends serving from when it was asked.
  for (int round = 0; round < 40; ++round) {
    f.round_after(ms(1500));
    CHECK(f.serving());
  }
  std::int64_t extended = f.serve_until;
  CHECK(extended > f.start + s(60));

  // One member finds a leader: one of three proves nothing, and serving ends 6 s after the
  // last proof was asked.
  f.etcd.leaderless_answers["b"] = false;
  while (f.now < f.start + s(80)) f.round_after(ms(1500));
  CHECK(f.serve_until == extended);
  CHECK_FALSE(f.serving());
}

TEST_CASE("lease keeper: refusals and silence prove nothing, one answer of three neither") {
  Fixture f;
  f.keeper.use_members({"a", "b", "c"});
  f.etcd.renewal = Renewal::Unanswered;
  f.etcd.leaderless_answers = {{"a", true}, {"b", std::nullopt}, {"c", std::nullopt}};
  while (f.now < f.start + s(20)) f.round_after(ms(1500));
  CHECK(f.serve_until == f.start + s(6));
}

TEST_CASE("lease keeper: a proof of no quorum that comes too late does not count") {
  Fixture f;
  f.keeper.use_members({"a", "b", "c"});
  f.etcd.renewal = Renewal::Unanswered;
  f.etcd.leaderless_answers = {{"a", false}, {"b", false}, {"c", false}};
  while (f.now < f.start + ms(8000)) f.round_after(ms(1500));  // a leader, but not for us
  // The members lose their leader now: a leader may have expired the lease before 9/10 of
  // the TTL after its last renewal, and only a keepalive can tell.
  f.etcd.leaderless_answers = {{"a", true}, {"b", true}, {"c", true}};
  f.round_after(ms(500));
  CHECK(f.serve_until == f.start + s(6));
  CHECK_FALSE(f.serving());
}

TEST_CASE("lease keeper: etcd down everywhere serves on only by cluster.serve_when_etcd_down") {
  Fixture bet(true);
  Fixture careful(false);
  for (auto* f : {&bet, &careful}) {
    f->etcd.renewal = Renewal::AllDown;
    while (f->now < f->start + s(20)) f->round_after(ms(1500));
  }
  CHECK(bet.serving());
  CHECK_FALSE(careful.serving());
  CHECK(careful.serve_until == careful.start + s(6));
}

TEST_CASE("lease keeper: a lost lease stops serving at once") {
  Fixture f;
  f.etcd.renewal = Renewal::Expired;
  f.round_after(ms(1500));
  CHECK(f.serve_until == 0);
  CHECK(f.keeper.lost());
  // No keepalive of a lease known gone, and nothing serves until a new one is taken.
  f.etcd.renewal = Renewal::Renewed;
  f.round_after(ms(1500));
  CHECK(f.etcd.keepalives == 1);
  CHECK(f.serve_until == 0);
  f.keeper.took(8, f.now, false);
  CHECK_FALSE(f.keeper.lost());
  CHECK(f.serving());
}

TEST_CASE("lease keeper: a keepalive answered after the lease was found gone does not serve") {
  // While the keepalive is under way, the agent finds the registration gone.
  for (auto answer : {Renewal::Renewed, Renewal::AllDown}) {
    Fixture f(true);  // cluster.serve_when_etcd_down: etcd down everywhere confirms too
    f.etcd.renewal = answer;
    f.etcd.meanwhile = [&] { CHECK(f.keeper.lose(7, "its registration is gone")); };
    f.round_after(ms(1500));
    CHECK(f.serve_until == 0);
    f.round_after(ms(1500));
    CHECK(f.serve_until == 0);
  }
}

TEST_CASE("lease keeper: back in the fleet, it serves once the server took what changed") {
  Fixture f;
  f.etcd.renewal = Renewal::Expired;
  f.round_after(ms(1500));
  f.etcd.renewal = Renewal::Renewed;
  f.keeper.took(8, f.now, true);
  f.round_after(ms(1500));
  CHECK(f.etcd.keepalives == 2);
  CHECK(f.serve_until == 0);  // renewed, but the server has not taken the changes yet
  f.keeper.rejoined(8);
  CHECK(f.serve_until == f.now + s(6));
}

TEST_CASE("lease keeper: a keepalive of the old lease does not let a rejoining one serve") {
  Fixture f;
  // While the keepalive of lease 7 is under way, the agent finds it gone and joins again.
  f.etcd.meanwhile = [&] {
    f.keeper.lose(7, "its registration is gone");
    f.keeper.took(8, f.now, true);
  };
  f.round_after(ms(1500));
  CHECK(f.serve_until == 0);
}

TEST_CASE("lease keeper: confirming an earlier rejoin does not let a later one serve") {
  Fixture f;
  f.keeper.lose(7, "gone");
  f.keeper.took(8, f.now, true);
  f.keeper.lose(8, "gone again");  // before the server confirmed the first rejoin
  f.keeper.took(9, f.now, true);
  f.keeper.rejoined(8);  // the server's confirmation of the first arrives late
  f.round_after(ms(1500));
  CHECK(f.serve_until == 0);
  f.keeper.rejoined(9);
  CHECK(f.serving());
}

// The agent's thread takes new leases while the keeper's thread renews whatever is in force:
// a rejoining lease must never be seen in force and free to serve.
TEST_CASE("lease keeper: a lease taken on rejoining is never served before its confirmation") {
  std::int64_t now = s(1000);
  LeaseKeeper keeper(Fixture::settings(false), [] { return s(1000); });
  std::atomic<std::int64_t> serve_until{0};
  keeper.took(1, now, true);
  keeper.serve_through(&serve_until);
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> served{0};
  std::thread renewing([&] {
    ScriptedEtcd etcd(now);  // `now` is not moved: every call takes no time
    while (!done) {
      keeper.keep(etcd);
      if (serve_until.load() != 0) served = serve_until.load();
    }
  });
  auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);  // not a warning per lease lost
  for (std::int64_t lease = 1; lease < 20'000; ++lease) {
    keeper.lose(lease, "gone");
    keeper.took(lease + 1, s(1000), true);
  }
  spdlog::set_level(level);
  done = true;
  renewing.join();
  CHECK(served == 0);
}

// The thread, on the real clock: a keepalive every TTL/6 (not TTL/6 in whole seconds, which is
// none at all under 6 s), and the news of a lost lease passed on.
struct CountedEtcd : LeaseEtcd {
  std::atomic<int> keepalives{0};
  std::atomic<bool> expired{false};
  Renewal keep_alive(std::int64_t) override {
    ++keepalives;
    return expired ? Renewal::Expired : Renewal::Renewed;
  }
  std::optional<bool> leaderless(const std::string&) override { return std::nullopt; }
};

TEST_CASE("lease keeper: its thread renews every TTL/6 and reports a lost lease") {
  std::int64_t now = s(1000);
  auto settings = Fixture::settings(false);
  settings.lease_ttl = std::chrono::seconds(2);
  LeaseKeeper keeper(settings, [&] { return now; });
  std::atomic<std::int64_t> serve_until{0};
  keeper.took(7, now, false);
  keeper.serve_through(&serve_until);
  auto owned = std::make_unique<CountedEtcd>();
  auto& etcd = *owned;
  std::atomic<bool> lost{false};
  keeper.start(std::move(owned), [&] { lost = true; });
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  int renewed = etcd.keepalives;
  CHECK(renewed >= 2);
  CHECK(renewed <= 4);
  etcd.expired = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!lost && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  keeper.stop();
  CHECK(lost);
  CHECK(serve_until == 0);
}

}  // namespace
