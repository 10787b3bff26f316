#pragma once

#include <chrono>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/salting_config.h"
#include "router/hotkeys/detection/hot_key_detector.h"

namespace santral::router {

class WorkerServices;

// One automatic salting or unsalting, with the write rate that decided it.
struct AutoSaltDecision {
  enum class Kind { Salt, Unsalt };
  Kind kind;
  std::string key;
  double writes_per_sec;
};

// hotkeys.auto_salt: decides, from the write rates all workers saw (merged as for SANTRAL
// HOTKEYS, once every check_ms), which keys to salt and which to unsalt.
//
//   not salted, only counter commands seen, writes > writes_per_sec   for for_s      -> salt
//   salted automatically,            writes < cold_writes_per_sec      for cold_for_s -> unsalt
//
// A key salted by the config or SANTRAL SALT is never unsalted here; a key an operator
// unsalted is not salted again (salting_change.h). Runs on the control plane's thread.
class AutoSalting {
 public:
  using Clock = std::chrono::steady_clock;

  // `rates`: every worker's, merged; `auto_salted`: the keys salted automatically now.
  std::vector<AutoSaltDecision> check(const config::AutoSaltSettings& settings,
                                      const std::vector<HotKeyRate>& rates,
                                      const std::vector<std::string>& auto_salted,
                                      Clock::time_point now);
  // Automatic salting was turned off: forget what was seen.
  void clear();

 private:
  std::unordered_map<std::string, Clock::time_point> hot_since_;   // candidates to salt
  std::unordered_map<std::string, Clock::time_point> cold_since_;  // candidates to unsalt
};

// Carries a decision out on `worker`'s thread, through the same path as SANTRAL SALT and
// UNSALT (layout, barrier, fold, log).
void carry_out(WorkerServices& worker, const AutoSaltDecision& decision,
               const config::AutoSaltSettings& settings);

}  // namespace santral::router
