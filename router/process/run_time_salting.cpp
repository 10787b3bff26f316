#include "router/process/run_time_salting.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "router/hotkeys/detection/hot_key_report.h"
#include "router/hotkeys/salting/salting_change.h"
#include "router/routes/in_flight_barrier.h"

namespace santral::router {

namespace asio = boost::asio;

namespace {

constexpr auto kAutoSaltOffCheck = std::chrono::seconds(1);

}  // namespace

void RunTimeSalting::stop() {
  stopped_ = true;
  timer_.cancel();
}

// Salting made at run time (SANTRAL SALT, automatic) lasts until UNSALT, across restarts: a
// fleet keeps it in etcd, a router alone in hotkeys.state_file. Nothing is folded at exit (an
// exit cut short in the middle of a fold would add a part twice at the next one).
std::string RunTimeSalting::restore(const std::filesystem::path& config_path) {
  file_ = std::make_unique<SaltingStateFile>(config_path, topology_->config->hotkeys.state_file);
  try {
    const auto& left = file_->load();
    if (!left.by_key.empty()) {
      std::string keys;
      for (const auto& [key, salting] : left.by_key)
        keys += fmt::format("{}'{}' over {}", keys.empty() ? "" : ", ", key, salting->salts);
      spdlog::info(
          "{}: {} salted at run time by an earlier run and not folded back since: salted "
          "again, read whole; SANTRAL UNSALT folds {}",
          file_->path().string(), keys, left.by_key.size() == 1 ? "it" : "them");
    }
    std::lock_guard lock(shared_.salt_lock);
    shared_.salt_overrides = std::make_shared<SaltOverrides>(left);
    ++shared_.salt_version;
  } catch (const SaltingStateFile::StartError& e) {
    return e.what();
  }
  shared_.salting_file = file_.get();
  return {};
}

// hotkeys.auto_salt: every check_ms, merges the workers' rates and salts or unsalts what
// AutoSalting decides, on the first worker (as SANTRAL SALT/UNSALT would). Off: checks once a
// second whether a reload turned it on.
void RunTimeSalting::check_auto_salting() {
  auto rearm = [this](std::chrono::milliseconds after) {
    if (stopped_) return;
    timer_.expires_after(after);
    timer_.async_wait([this](boost::system::error_code error) {
      if (!error) check_auto_salting();
    });
  };
  const auto& settings = topology_->config->hotkeys.auto_salt;
  if (!settings.enabled || workers_.empty()) {
    auto_salting_.clear();
    return rearm(kAutoSaltOffCheck);
  }
  collect_hot_keys(pointers_to<WorkerServices>(workers_), io_,
                   [this, rearm](const std::vector<HotKeyRate>& rates) {
                     const auto& settings = topology_->config->hotkeys.auto_salt;
                     Worker* home = workers_.front().get();
                     if (settings.enabled && !stopped_) {
                       auto decisions =
                           auto_salting_.check(settings, rates, run_time_salted_keys(*home, true),
                                               std::chrono::steady_clock::now());
                       for (auto& decision : decisions)
                         asio::post(home->io(), [home, decision = std::move(decision), settings] {
                           carry_out(*home, decision, settings);
                         });
                     }
                     rearm(std::chrono::milliseconds(settings.check_ms));
                   });
}

void RunTimeSalting::share(SaltChange change, std::function<void(std::string)> done) {
  asio::post(io_, [this, change = std::move(change), done = std::move(done)]() mutable {
    if (!fleet_) return done({});
    fleet_->update(
        fleet_->salting_key(),
        [change = std::move(change)](const std::string& current) {
          return apply_salt_change(current, change);
        },
        [this, done = std::move(done)](std::int64_t revision, const std::string& error) {
          if (!error.empty()) return done("the fleet's salting was not changed: " + error);
          // Every router must take it, this one too (when its next read of etcd finds it).
          auto wait = std::chrono::seconds(2) * fleet_->settings().lease_ttl.count();
          waiters_.push_back({revision, done, std::chrono::steady_clock::now() + wait});
          check_waiters();
        });
  });
}

// A salting version read from etcd: every worker takes it, then waits out what it had sent
// by the old one; only then does this router acknowledge it (an UNSALT elsewhere waits for
// that before folding the sub-keys).
void RunTimeSalting::take_fleet_salting(const EtcdKeyValue& salting) {
  auto decoded = decode_salt_overrides("etcd key " + salting.key, salting.value);
  if (!decoded.overrides) {
    spdlog::error("fleet '{}': refusing salting version {}: {}", fleet_->settings().name,
                  salting.mod_revision, decoded.error);
    return;
  }
  {
    std::lock_guard lock(shared_.salt_lock);
    shared_.salt_overrides = decoded.overrides;
    ++shared_.salt_version;
  }
  auto version = salting.mod_revision;
  barrier_workers(
      io_, pointers_to<Worker>(workers_), {}, [](Worker& worker) { worker.refresh_salts(); },
      [this, version] { fleet_->acknowledge_salting(version); });
}

void RunTimeSalting::check_waiters() {
  if (waiters_.empty()) return;
  auto view = fleet_->view();
  auto now = std::chrono::steady_clock::now();
  std::vector<Waiter> waiting;
  for (auto& waiter : waiters_) {
    std::string behind;
    // A router left out lately may still write the sub-keys: its lease and a margin first.
    for (const auto& gone : view.departed)
      behind += (behind.empty() ? "" : ", ") + gone.name + " (its lease expired lately)";
    bool self_seen = false;
    for (const auto& router : view.routers) {
      self_seen =
          self_seen || (router.name == fleet_->router_name() && router.lease == fleet_->lease());
      if (router.salting_version < waiter.version)
        behind += (behind.empty() ? "" : ", ") + router.name;
    }
    if (!self_seen) behind += (behind.empty() ? "" : ", ") + fleet_->router_name();
    if (behind.empty()) {
      waiter.done({});
    } else if (now >= waiter.deadline) {
      waiter.done(fmt::format("routers {} have not taken salting version {} in time", behind,
                              waiter.version));
    } else {
      waiting.push_back(std::move(waiter));
    }
  }
  waiters_ = std::move(waiting);
}

}  // namespace santral::router
