#include "router/cluster/fleet_agent.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "router/backend/lease_clock.h"

namespace santral::router {

namespace {

using Clock = std::chrono::steady_clock;

// One etcd call waits at most this long for a member: well inside the lease, so that a
// router tries every member several times before its lease can run out.
std::chrono::milliseconds call_timeout(const config::ClusterSettings& settings) {
  auto fifth = std::chrono::duration_cast<std::chrono::milliseconds>(settings.lease_ttl) / 5;
  return std::clamp(fifth, std::chrono::milliseconds(200), std::chrono::milliseconds(1000));
}

// The keeper's calls: several members may be tried, and the proof of no quorum still has to
// come in time when they all stay silent.
std::chrono::milliseconds keeper_timeout(const config::ClusterSettings& settings) {
  auto tenth = std::chrono::duration_cast<std::chrono::milliseconds>(settings.lease_ttl) / 10;
  return std::clamp(tenth, std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
}

}  // namespace

FleetAgent::FleetAgent(config::ClusterSettings settings, RouterRecord self)
    : settings_(std::move(settings)),
      router_name_(self.name),
      etcd_(settings_.etcd, call_timeout(settings_)),
      keeper_(settings_),
      watch_(settings_, std::move(self), etcd_) {}

FleetAgent::~FleetAgent() {
  stop();
}

FleetAgent::Joined FleetAgent::join(const std::string& document) {
  auto deadline = Clock::now() + settings_.start_timeout;
  bool published = false;
  if (settings_.etcd.size() == 1)
    spdlog::warn(
        "fleet '{}': cluster.etcd names one address ({}): if that member (or the proxy behind "
        "it) is cut off, this router cannot tell etcd down from itself cut off, and stops "
        "reaching the shards; list every member",
        settings_.name, settings_.etcd.front());
  for (;;) {
    try {
      // Registered first, so that a move approved from here on waits for this router; a live
      // router of the same name makes this one refuse to start.
      if (watch_.lease() == 0) take_lease(false);
      watch_.register_self(true);
      try {
        keeper_.use_members(etcd_.member_list());
      } catch (const EtcdUnavailable&) {
      }
      auto joined = watch_.first_read(document, published);
      if (!joined) continue;
      std::lock_guard guard(lock_);
      last_answer_ = Clock::now();
      return *joined;
    } catch (const EtcdUnavailable& e) {
      if (Clock::now() >= deadline) throw;
      spdlog::warn("fleet '{}': etcd does not answer yet ({}); trying again", settings_.name,
                   e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
}

void FleetAgent::start(boost::asio::io_context& home, Hooks hooks,
                       std::atomic<std::int64_t>* serve_until) {
  home_ = &home;
  rejoined_ = hooks.rejoined;
  watch_.start(home, std::move(hooks));
  keeper_.serve_through(serve_until);
  thread_ = std::thread([this] { run(); });
  keeper_.start(lease_etcd_calls(settings_.etcd, keeper_timeout(settings_)),
                [this] { wake_.ring(); });
}

void FleetAgent::stop() {
  if (!wake_.stop()) return;
  if (thread_.joinable()) thread_.join();
  keeper_.stop();
  if (auto lease = watch_.lease()) {
    try {
      // Said first: the others need not wait out this router's lease, it stops serving now.
      watch_.leave();
      etcd_.revoke(lease);  // the others see this router leave at once
    } catch (const EtcdUnavailable&) {
    }
  }
}

std::int64_t FleetAgent::lease() const {
  return watch_.lease();
}

void FleetAgent::propose(std::string key, std::string value, std::int64_t expected, Proposed done) {
  proposals_.add(Proposals::Put{std::move(key), std::move(value), expected}, std::move(done));
  wake_.ring();
}

void FleetAgent::update(std::string key, Change change, Proposed done) {
  proposals_.add(Proposals::Update{std::move(key), std::move(change)}, std::move(done));
  wake_.ring();
}

void FleetAgent::call(Action action, Proposed done) {
  proposals_.add(Proposals::Call{std::move(action)}, std::move(done));
  wake_.ring();
}

void FleetAgent::acknowledge_move(std::int64_t move_id, std::uint64_t epoch) {
  if (watch_.acknowledge_move(move_id, epoch)) wake_.ring();
}

void FleetAgent::report_walk(std::uint64_t keys_moved) {
  watch_.report_walk(keys_moved);  // written at the next round
}

void FleetAgent::acknowledge_salting(std::int64_t version) {
  if (watch_.acknowledge_salting(version)) wake_.ring();
}

void FleetAgent::acknowledge(std::int64_t version) {
  if (watch_.acknowledge(version)) wake_.ring();
}

FleetAgent::View FleetAgent::view() const {
  View view;
  {
    std::lock_guard guard(lock_);
    view = touch_;
    view.silent_ms = std::chrono::duration<double, std::milli>(Clock::now() - last_answer_).count();
  }
  view.routers = watch_.routers();
  view.lease = watch_.lease();
  view.departed = watch_.departed();
  return view;
}

void FleetAgent::run() {
  bool quick = true;  // the first round at once, and right after a proposal
  for (;;) {
    if (quick ? wake_.stopping() : !wake_.wait_for(settings_.poll)) return;
    quick = proposals_.carry_out(etcd_, *home_) > 0;
    try {
      round();
      std::lock_guard guard(lock_);
      if (!touch_.in_touch && !touch_.last_error.empty())
        spdlog::info("fleet '{}': etcd answers again ({})", settings_.name, etcd_.member());
      touch_.in_touch = true;
      touch_.last_error.clear();
      touch_.member = etcd_.member();
      last_answer_ = Clock::now();
    } catch (const RouterNameTaken& e) {
      spdlog::error("fleet '{}': {}; this router stays out of the fleet", settings_.name, e.what());
    } catch (const EtcdUnavailable& e) {
      // Whether this router may serve on is the keeper's to say (LeaseKeeper::keep).
      std::lock_guard guard(lock_);
      if (touch_.in_touch || touch_.last_error.empty())
        spdlog::warn(
            "fleet '{}': lost etcd ({}); serving with map version {} only while the "
            "lease allows",
            settings_.name, e.what(), watch_.map_version());
      touch_.in_touch = false;
      touch_.last_error = e.what();
    }
  }
}

// One round of the agent's thread after the proposals: a new lease when the last one is gone,
// then the registration, the fleet's keys and the fences. Throws EtcdUnavailable.
void FleetAgent::round() {
  if (keeper_.lost()) {
    watch_.lease_lost();
    rejoin();  // RouterNameTaken: the lease stays lost, tried again next round
  }
  // This router's shard user goes everywhere before its registration says it switched.
  if (shard_fence_) shard_fence_->admit(keeper_.fresh());
  if (auto lease = watch_.lease(); !watch_.register_self(false)) {
    keeper_.lose(lease, "this router's registration is gone (its lease expired)");
    wake_.ring();  // joins again at once
  }
  watch_.poll();
  watch_.fence_departed();
  if (rounds_ % 50 == 49 && shard_fence_) shard_fence_->recheck();
  if (++rounds_ % 50 == 1) keeper_.use_members(etcd_.member_list());  // they change rarely
  if (!rejoined_lease_) return;
  auto lease = *std::exchange(rejoined_lease_, std::nullopt);
  // Posted after what this round's poll posted: the server confirms once it has taken it.
  boost::asio::post(*home_, [this, lease] {
    auto confirm = [this, lease] { keeper_.rejoined(lease); };
    if (rejoined_)
      rejoined_(confirm);
    else
      confirm();
  });
}

void FleetAgent::rejoin() {
  take_lease(true);
  try {
    watch_.register_self(true);
  } catch (const RouterNameTaken& e) {
    keeper_.lose(keeper_.lease(), "its name is held by a live router");
    rejoined_lease_.reset();
    throw;
  }
}

void FleetAgent::take_lease(bool rejoining) {
  auto asked = lease_clock_ns();
  auto lease = etcd_.grant_lease(settings_.lease_ttl);
  watch_.lease_taken(lease, shard_fence_ ? shard_fence_->new_lease(lease) : std::string());
  // Left out meanwhile: serve again only once what changed has been read and taken, after
  // the server has handled what this round's poll posts to it.
  keeper_.took(lease, asked, rejoining);
  if (!rejoining) return;
  spdlog::warn("fleet '{}': joining again with lease {}", settings_.name, lease);
  rejoined_lease_ = lease;
}

void FleetAgent::fence_at_shards(ShardAccount admin) {
  shard_fence_ =
      std::make_unique<ShardFence>(settings_.name, std::move(admin), call_timeout(settings_));
  watch_.fence_with(shard_fence_.get());
}

void FleetAgent::use_shards(const std::vector<config::ShardConfig>& shards) {
  if (shard_fence_) shard_fence_->use_shards(shards);
}

bool FleetAgent::admit_at_shards() {
  return !shard_fence_ || shard_fence_->admit(keeper_.fresh());
}

}  // namespace santral::router
