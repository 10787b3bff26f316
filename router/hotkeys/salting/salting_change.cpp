#include "router/hotkeys/salting/salting_change.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "protocol/errors.h"
#include "router/hotkeys/salting/salt_overrides_json.h"
#include "router/hotkeys/salting/salting_barrier.h"
#include "router/hotkeys/salting/salting_state_file.h"
#include "router/hotkeys/salting/unsalt_fold.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

const char* log_prefix(SaltedBy by, bool salting) {
  if (by == SaltedBy::Auto) return salting ? "auto-salting" : "auto-unsalting";
  return salting ? "SANTRAL SALT" : "SANTRAL UNSALT";
}

// Replaces the run-time salting of `key` (nullopt: not salted; `forget`: as the config says)
// and tells every worker; this worker takes it at once. Unchanged when `only_if_new` and the
// key already has a run-time change, or when a router alone cannot first write a newly salted
// key into hotkeys.state_file (`not_kept` then says why).
bool change_salting(WorkerServices& worker, std::string_view key,
                    std::optional<SaltOverrides::Salting> salting, bool only_if_new, bool forget,
                    std::string* not_kept = nullptr) {
  auto& shared = worker.shared();
  {
    std::lock_guard lock(shared.salt_lock);
    std::string name(key);
    if (only_if_new && shared.salt_overrides && shared.salt_overrides->by_key.contains(name))
      return false;
    if (salting && !forget && shared.salting_file != nullptr) {
      auto error = shared.salting_file->keep(name, *salting);
      if (!error.empty()) {
        if (not_kept != nullptr) *not_kept = std::move(error);
        return false;
      }
    }
    auto next = shared.salt_overrides ? std::make_shared<SaltOverrides>(*shared.salt_overrides)
                                      : std::make_shared<SaltOverrides>();
    if (forget)
      next->by_key.erase(name);
    else
      next->by_key[name] = salting;
    shared.salt_overrides = std::move(next);
    ++shared.salt_version;
  }
  worker.refresh_salts();
  for (WorkerServices* peer : worker.peers())
    if (peer != &worker) boost::asio::post(peer->io(), [peer] { peer->refresh_salts(); });
  return true;
}

// A fold of `key` is done: it leaves hotkeys.state_file, unless it was salted again meanwhile.
void forget_folded(WorkerServices& worker, const std::string& key) {
  auto& shared = worker.shared();
  std::lock_guard lock(shared.salt_lock);
  if (shared.salting_file == nullptr) return;
  if (shared.salt_overrides) {
    auto again = shared.salt_overrides->by_key.find(key);
    if (again != shared.salt_overrides->by_key.end() && again->second) return;
  }
  shared.salting_file->forget(key);
}

// `target` as a fold's: once the fold of `key` is done, the key leaves hotkeys.state_file.
UnsaltFoldTarget forgotten_once_folded(WorkerServices& home, std::string key,
                                       UnsaltFoldTarget target) {
  target.done = [&home, key = std::move(key),
                 done = std::move(target.done)](const std::string& reply) {
    if (reply.starts_with('+')) forget_folded(home, key);
    if (done) done(reply);
  };
  return target;
}

}  // namespace

std::string salt_key(WorkerServices& worker, std::string_view key, SaltOverrides::Salting salting,
                     std::string_view why) {
  if (worker.salts().find(key) != nullptr) return {};
  std::string not_kept;
  if (!change_salting(worker, key, salting, salting.by == SaltedBy::Auto, false, &not_kept)) {
    if (not_kept.empty()) return {};
    spdlog::error("{}: '{}' was not salted: {}", log_prefix(salting.by, true), key, not_kept);
    return protocol::error_message(protocol::ClientError::SaltStateFile, key, not_kept);
  }
  // In a fleet every router takes it too. Until one does, its writes go to the key itself,
  // which is the counter's first sub-key and summed with the others: nothing waits for that.
  worker.shared().control->share_salting({std::string(key), salting, false},
                                         [name = std::string(key)](const std::string& error) {
                                           if (!error.empty())
                                             spdlog::error("salting '{}': {}", name, error);
                                         });
  const SaltedCounter* counter = worker.salts().find(key);
  if (counter == nullptr) return {};
  std::string shards;
  for (std::size_t shard : counter->shards)
    shards += (shards.empty() ? "" : ", ") + worker.shard_map().shard(shard).name;
  spdlog::info("{}: '{}' is a salted counter over {} sub-keys on shards {} (reply {}), {}",
               log_prefix(salting.by, true), key, counter->salts, shards,
               config::salt_reply_name(counter->reply), why);
  return {};
}

bool unsalt_key(WorkerServices& worker, std::string_view key, bool only_auto, std::string_view why,
                UnsaltFoldTarget target) {
  const SaltedCounter* current = worker.salts().find(key);
  if (current == nullptr || (only_auto && current->salted_by != SaltedBy::Auto)) return false;
  SaltedCounter counter = *current;
  // An operator's UNSALT stays (the key is not salted automatically again until restart); an
  // automatic one leaves the key as the config has it.
  change_salting(worker, key, std::nullopt, false, only_auto);
  const char* prefix = log_prefix(only_auto ? SaltedBy::Auto : SaltedBy::Command, false);
  spdlog::info("{}: '{}' is no longer salted, {}; folding its {} sub-keys back into it", prefix,
               key, why, counter.salts);
  std::vector<std::size_t> shards = counter.shards;
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  WorkerServices* home = &worker;
  // Folded only once every router has stopped writing to the sub-keys: this one's workers
  // (the barrier), then, in a fleet, every live router (share_salting waits for them).
  SaltChange change{std::string(key), std::nullopt, only_auto};
  barrier_salting(
      worker, shards,
      [home, prefix, change = std::move(change), counter = std::move(counter),
       target = std::move(target)]() mutable {
        home->shared().control->share_salting(
            std::move(change),
            answer_on<std::string>(
                home->io(), [home, prefix, counter = std::move(counter),
                             target = std::move(target)](std::string error) mutable {
                  if (error.empty()) {
                    auto folded =
                        forgotten_once_folded(*home, counter.sub_keys.front(), std::move(target));
                    return fold_sub_keys(*home, prefix, std::move(counter), std::move(folded));
                  }
                  spdlog::error("{}: '{}' keeps its sub-keys unfolded: {}", prefix,
                                counter.sub_keys.front(), error);
                  if (target.done)
                    target.done("-" +
                                protocol::error_message(
                                    protocol::ClientError::FleetUnsaltUnconfirmed,
                                    counter.sub_keys.front(), protocol::one_line(error)) +
                                "\r\n");
                }));
      });
  return true;
}

std::vector<std::string> run_time_salted_keys(WorkerServices& worker, bool only_auto) {
  std::shared_ptr<const SaltOverrides> overrides;
  {
    std::lock_guard lock(worker.shared().salt_lock);
    overrides = worker.shared().salt_overrides;
  }
  std::vector<std::string> keys;
  if (!overrides) return keys;
  for (const auto& [key, salting] : overrides->by_key)
    if (salting && (!only_auto || salting->by == SaltedBy::Auto)) keys.push_back(key);
  return keys;
}

}  // namespace santral::router
