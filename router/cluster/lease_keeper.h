#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/cluster_config.h"

namespace santral::router {

// What the keeper asks etcd, as answers rather than exceptions: an EtcdClient of the keeper's
// own in the router (lease_etcd_calls()), a scripted etcd in tests.
class LeaseEtcd {
 public:
  enum class Renewal {
    Renewed,     // the lease lives on
    Expired,     // etcd says the lease is gone
    Unanswered,  // no member answered: this router may be cut off from an etcd that works
    AllDown,     // every member refused or said it has no leader (EtcdUnavailable::all_down)
  };
  virtual ~LeaseEtcd() = default;
  virtual Renewal keep_alive(std::int64_t lease) = 0;
  // true: `member`, asked alone, answered that it has no leader; nullopt: it did not answer.
  virtual std::optional<bool> leaderless(const std::string& member) = 0;
};

std::unique_ptr<LeaseEtcd> lease_etcd_calls(std::vector<std::string> members,
                                            std::chrono::milliseconds timeout);

// The lease clock (lease_clock.h ns): a fake one in tests.
using LeaseClock = std::function<std::int64_t()>;

// This router's lease and how long it may reach the shards on it (`serve_until`, lease clock
// ns), kept on a thread of its own that only sends keepalives, so that no slow call can hold
// one back. Every decision is keep()'s, a function of the clock and of etcd's answers, which
// a test calls round by round; the thread only calls it every TTL/6.
//
//   serve_until = the time the last confirmation was asked + 2/3 TTL, where a confirmation is
//     a keepalive etcd answered for the lease in force, or, with etcd silent, a proof that no
//     lease can expire: more than half of the members answered, each alone, that they have no
//     leader, completed within 9/10 TTL of the last renewal or proof;
//   serve_until = 0 at once when the lease is found gone, until a new lease is taken, and
//     after a rejoin until the server has taken what changed meanwhile (rejoined()).
//
// One mutex guards the lease, its times and serve_until's writes, so that a confirmation is
// checked against the lease in force, and stored, in one step.
class LeaseKeeper {
 public:
  explicit LeaseKeeper(const config::ClusterSettings& settings, LeaseClock clock = nullptr);
  ~LeaseKeeper();

  // Where the serving time goes (the workers read it); from then on confirmations write it.
  void serve_through(std::atomic<std::int64_t>* serve_until);
  // Runs keep() every TTL/6 on a thread of its own; `lost` is called when it finds the lease
  // gone.
  void start(std::unique_ptr<LeaseEtcd> etcd, std::function<void()> lost);
  void stop();

  // One round of the keeper's thread.
  void keep(LeaseEtcd& etcd);

  // A new lease, granted at `asked_ns`. `rejoining`: this router was out of the fleet, and
  // serves on it only once rejoined(lease) says the server has taken what changed meanwhile.
  void took(std::int64_t lease, std::int64_t asked_ns, bool rejoining);
  void rejoined(std::int64_t lease);
  // `lease` is gone (as the agent found it, or the keeper): serving stops at once, and lost()
  // says so until the next took(). False when `lease` is no longer the one in force.
  bool lose(std::int64_t lease, const std::string& why);
  bool lost() const;

  std::int64_t lease() const;  // 0: none
  // A keepalive etcd answered within 2/3 of the lease (no proof of lost quorum counts).
  bool fresh() const;
  void use_members(std::vector<std::string> members);  // as etcd last listed them

 private:
  bool prove_no_quorum(LeaseEtcd& etcd, std::int64_t lease);
  void confirm(std::int64_t lease, std::int64_t asked_ns);  // with mutex_ held
  std::int64_t ttl_ns() const;

  std::string fleet_;
  std::chrono::seconds ttl_;
  bool serve_when_etcd_down_;
  LeaseClock clock_;

  // keep()'s own, from one round to the next
  bool proving_ = false;  // the last round proved etcd without quorum
  bool failed_ = false;   // the last round confirmed nothing

  mutable std::mutex mutex_;  // guards what follows
  std::atomic<std::int64_t>* serve_until_ = nullptr;
  std::int64_t lease_ = 0;
  bool lost_ = false;
  bool rejoining_ = false;
  std::int64_t renewed_ns_ = 0;    // the last keepalive etcd answered was asked then
  std::int64_t safe_from_ns_ = 0;  // no leader can expire the lease before this + TTL
  std::vector<std::string> members_;

  std::function<void()> on_lost_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace santral::router
