#include "router/hotkeys/salting/auto_salt.h"

#include <utility>

#include <fmt/format.h>

#include "router/hotkeys/salting/salting_change.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

bool lasted(AutoSalting::Clock::time_point since, AutoSalting::Clock::time_point now,
            std::uint32_t seconds) {
  return now - since >= std::chrono::seconds(seconds);
}

}  // namespace

std::vector<AutoSaltDecision> AutoSalting::check(const config::AutoSaltSettings& settings,
                                                 const std::vector<HotKeyRate>& rates,
                                                 const std::vector<std::string>& auto_salted,
                                                 Clock::time_point now) {
  std::vector<AutoSaltDecision> decisions;
  std::unordered_map<std::string, Clock::time_point> hot;
  std::unordered_map<std::string, double> writes;
  for (const auto& rate : rates) {
    writes.emplace(rate.key, rate.writes);
    if (rate.salts != 0 || rate.non_counter || rate.writes <= settings.writes_per_sec) continue;
    auto found = hot_since_.find(rate.key);
    Clock::time_point since = found != hot_since_.end() ? found->second : now;
    if (lasted(since, now, settings.for_s))
      decisions.push_back({AutoSaltDecision::Kind::Salt, rate.key, rate.writes});
    else
      hot.emplace(rate.key, since);
  }
  hot_since_ = std::move(hot);

  std::unordered_map<std::string, Clock::time_point> cold;
  for (const auto& key : auto_salted) {
    auto rate = writes.find(key);  // a key no sketch holds any more is cold
    double seen = rate != writes.end() ? rate->second : 0;
    if (seen >= settings.cold_writes_per_sec) continue;
    auto found = cold_since_.find(key);
    Clock::time_point since = found != cold_since_.end() ? found->second : now;
    if (lasted(since, now, settings.cold_for_s))
      decisions.push_back({AutoSaltDecision::Kind::Unsalt, key, seen});
    else
      cold.emplace(key, since);
  }
  cold_since_ = std::move(cold);
  return decisions;
}

void AutoSalting::clear() {
  hot_since_.clear();
  cold_since_.clear();
}

void carry_out(WorkerServices& worker, const AutoSaltDecision& decision,
               const config::AutoSaltSettings& settings) {
  if (decision.kind == AutoSaltDecision::Kind::Salt) {
    salt_key(worker, decision.key,
             SaltOverrides::Salting{settings.salts, settings.reply, SaltedBy::Auto},
             fmt::format("automatically: its write rate, {:.1f}/s, stayed above {}/s for {} s "
                         "and it saw only counter commands",
                         decision.writes_per_sec, settings.writes_per_sec, settings.for_s));
    return;
  }
  unsalt_key(
      worker, decision.key, true,
      fmt::format("automatically: its write rate, {:.1f}/s, stayed below {}/s for {} s",
                  decision.writes_per_sec, settings.cold_writes_per_sec, settings.cold_for_s),
      UnsaltFoldTarget{worker.pool().default_profile(), 0, nullptr});
}

}  // namespace santral::router
