#include "router/cluster/lease_keeper.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "router/backend/lease_clock.h"
#include "router/cluster/etcd_client.h"

namespace santral::router {

namespace {

class EtcdLeaseCalls final : public LeaseEtcd {
 public:
  EtcdLeaseCalls(std::vector<std::string> members, std::chrono::milliseconds timeout)
      : etcd_(std::move(members), timeout) {}

  Renewal keep_alive(std::int64_t lease) override {
    try {
      return etcd_.keep_alive(lease) ? Renewal::Renewed : Renewal::Expired;
    } catch (const EtcdUnavailable& e) {
      return e.all_down() ? Renewal::AllDown : Renewal::Unanswered;
    }
  }
  std::optional<bool> leaderless(const std::string& member) override {
    return etcd_.leaderless(member);
  }

 private:
  EtcdClient etcd_;
};

void warn_no_quorum(const std::string& fleet) {
  spdlog::warn(
      "fleet '{}': etcd has no quorum (a majority of its members say they have no leader): no "
      "lease can expire, serving on",
      fleet);
}

}  // namespace

std::unique_ptr<LeaseEtcd> lease_etcd_calls(std::vector<std::string> members,
                                            std::chrono::milliseconds timeout) {
  return std::make_unique<EtcdLeaseCalls>(std::move(members), timeout);
}

LeaseKeeper::LeaseKeeper(const config::ClusterSettings& settings, LeaseClock clock)
    : fleet_(settings.name),
      ttl_(settings.lease_ttl),
      serve_when_etcd_down_(settings.serve_when_etcd_down),
      clock_(clock ? std::move(clock) : LeaseClock([] { return lease_clock_ns(); })) {}

LeaseKeeper::~LeaseKeeper() {
  stop();
}

void LeaseKeeper::serve_through(std::atomic<std::int64_t>* serve_until) {
  std::lock_guard guard(mutex_);
  serve_until_ = serve_until;
  confirm(lease_, renewed_ns_);
}

void LeaseKeeper::start(std::unique_ptr<LeaseEtcd> etcd, std::function<void()> lost) {
  on_lost_ = std::move(lost);
  // In milliseconds: TTL/6 in whole seconds is no wait at all for a lease under 6 s.
  auto every = std::chrono::duration_cast<std::chrono::milliseconds>(ttl_) / 6;
  thread_ = std::thread([this, every, etcd = std::move(etcd)] {
    for (;;) {
      {
        std::unique_lock guard(mutex_);
        wake_.wait_for(guard, every, [this] { return stopping_; });
        if (stopping_) return;
      }
      keep(*etcd);
    }
  });
}

void LeaseKeeper::stop() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::keep(LeaseEtcd& etcd) {
  std::int64_t lease;
  {
    std::lock_guard guard(mutex_);
    if (lease_ == 0 || lost_) return;
    lease = lease_;
  }
  // Without quorum a keepalive can take every member's timeout to fail: after a round that
  // confirmed nothing the proof, which is quick, goes first, so that it is renewed before the
  // serving time it extends runs out.
  if (failed_) {
    bool proved = prove_no_quorum(etcd, lease);
    if (proved && !proving_) warn_no_quorum(fleet_);
    proving_ = proved;
  }
  auto asked = clock_();
  switch (etcd.keep_alive(lease)) {
    case LeaseEtcd::Renewal::Renewed: {
      if (proving_) spdlog::info("fleet '{}': etcd has a leader again", fleet_);
      proving_ = failed_ = false;
      std::lock_guard guard(mutex_);
      if (lease != lease_ || lost_) return;  // gone, or joined again with a new one meanwhile
      renewed_ns_ = safe_from_ns_ = asked;
      return confirm(lease, asked);
    }
    case LeaseEtcd::Renewal::Expired:
      if (lose(lease, fmt::format("etcd says lease {} has expired", lease)) && on_lost_) on_lost_();
      return;
    case LeaseEtcd::Renewal::AllDown:
      if (serve_when_etcd_down_) {
        failed_ = true;
        std::lock_guard guard(mutex_);
        return confirm(lease, asked);  // cluster.serve_when_etcd_down: the operator's bet
      }
      [[fallthrough]];
    case LeaseEtcd::Renewal::Unanswered:
      failed_ = true;
      if (!proving_ && prove_no_quorum(etcd, lease)) {
        proving_ = true;
        warn_no_quorum(fleet_);
      }
      return;
  }
}

// Extends serving from now when etcd has no quorum. The lease cannot have expired before
// safe_from_ns_ + TTL (the last renewal, or the last proof: a leader elected after it gives
// every lease a full TTL again), so the proof counts only if it is complete well before then;
// a proof that comes later cannot tell whether a leader expired the lease meanwhile, and only
// a keepalive tells.
bool LeaseKeeper::prove_no_quorum(LeaseEtcd& etcd, std::int64_t lease) {
  auto asked = clock_();
  std::vector<std::string> members;
  {
    std::lock_guard guard(mutex_);
    members = members_;
  }
  std::size_t leaderless = 0;
  for (const auto& member : members)
    if (etcd.leaderless(member).value_or(false)) ++leaderless;
  if (members.empty() || leaderless * 2 <= members.size()) return false;
  std::lock_guard guard(mutex_);
  if (lease != lease_ || lost_ || clock_() > safe_from_ns_ + ttl_ns() * 9 / 10) return false;
  safe_from_ns_ = asked;
  confirm(lease, asked);
  return true;
}

void LeaseKeeper::confirm(std::int64_t lease, std::int64_t asked_ns) {
  if (serve_until_ == nullptr || lease != lease_ || lease == 0 || lost_ || rejoining_) return;
  auto until = asked_ns + ttl_ns() * 2 / 3;
  if (until > serve_until_->load()) serve_until_->store(until);
}

void LeaseKeeper::took(std::int64_t lease, std::int64_t asked_ns, bool rejoining) {
  std::lock_guard guard(mutex_);
  // The lease and whether it may serve yet are published together: no keepalive of the new
  // lease can find it in force and not rejoining.
  lease_ = lease;
  lost_ = false;
  rejoining_ = rejoining;
  renewed_ns_ = safe_from_ns_ = asked_ns;
  confirm(lease, asked_ns);
}

void LeaseKeeper::rejoined(std::int64_t lease) {
  std::lock_guard guard(mutex_);
  // A confirmation for an earlier lease does not let a later rejoin serve.
  if (lease != lease_ || !rejoining_) return;
  rejoining_ = false;
  confirm(lease, renewed_ns_);
}

// The lease is known gone: no request may reach a shard from now on, whatever time was left.
bool LeaseKeeper::lose(std::int64_t lease, const std::string& why) {
  {
    std::lock_guard guard(mutex_);
    if (lease != lease_ || lost_) return false;
    lost_ = true;
    if (serve_until_ != nullptr) serve_until_->store(0);
  }
  spdlog::warn("fleet '{}': {}; this router stops reaching the shards until it has joined again",
               fleet_, why);
  return true;
}

bool LeaseKeeper::lost() const {
  std::lock_guard guard(mutex_);
  return lost_;
}

std::int64_t LeaseKeeper::lease() const {
  std::lock_guard guard(mutex_);
  return lease_;
}

bool LeaseKeeper::fresh() const {
  std::lock_guard guard(mutex_);
  return clock_() < renewed_ns_ + ttl_ns() * 2 / 3;
}

void LeaseKeeper::use_members(std::vector<std::string> members) {
  std::lock_guard guard(mutex_);
  members_ = std::move(members);
}

std::int64_t LeaseKeeper::ttl_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(ttl_).count();
}

}  // namespace santral::router
