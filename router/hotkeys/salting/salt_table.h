#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/hotkeys/salting/salted_layout.h"

namespace santral::router {

// SANTRAL SALT and UNSALT (and automatic salting) since start-up: key -> its salting, or
// nullopt where UNSALT took a key out of salting (the config's, an exact key or a pattern's).
// Automatic unsalting removes its key instead: the key is then as the config says. An immutable
// snapshot: a change makes a new one (SharedState holds the latest) and every worker takes it.
struct SaltOverrides {
  struct Salting {
    std::uint32_t salts;
    config::SaltReply reply;
    SaltedBy by = SaltedBy::Command;
  };
  std::unordered_map<std::string, std::optional<Salting>> by_key;
};

// One worker's view of which keys are salted counters, with their layouts. Built from the
// config's `salting:` and the run-time overrides; layouts are worked out on first use and
// remembered (a pattern can salt any number of keys, so that memory is bounded).
class SaltTable {
 public:
  // `naming`: the map sub-keys are named by, when not `map` (after a move).
  void rebuild(std::shared_ptr<const config::Config> config,
               std::shared_ptr<const placement::ShardMap> map,
               std::shared_ptr<const placement::ShardMap> naming,
               std::shared_ptr<const SaltOverrides> overrides);

  // Nothing is salted: the request path skips every lookup.
  bool empty() const { return empty_; }
  // The counter `key` names, or nullptr when it is not salted.
  const SaltedCounter* find(std::string_view key);
  // A sub-key for the next write, uniformly at random in [0, salts).
  std::uint32_t pick(std::uint32_t salts);
  // Every key salted by name (the config's keys, SANTRAL SALT, automatic salting), and every
  // key a pattern salted that this worker has met.
  std::vector<std::string> salted_keys() const;
  // Changes whenever counters find() returned may be gone (a rebuild, or layouts forgotten to
  // bound their memory): a plan kept across a wait is made again then (ActiveRequest).
  std::uint64_t generation() const { return generation_; }

 private:
  std::optional<SaltOverrides::Salting> salting_of(std::string_view key) const;

  static constexpr std::size_t kMaxRemembered = 4096;
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };
  template <typename T>
  using ByKey = std::unordered_map<std::string, T, KeyHash, std::equal_to<>>;

  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<const placement::ShardMap> map_;
  std::shared_ptr<const placement::ShardMap> naming_;
  std::shared_ptr<const SaltOverrides> overrides_;
  bool empty_ = true;
  std::uint64_t random_state_ = 0x9e3779b97f4a7c15ull;
  bool has_patterns_ = false;
  std::uint64_t generation_ = 0;
  ByKey<SaltOverrides::Salting> exact_;
  // Layouts by key; a key found not salted is remembered too (salts == 0), for patterns.
  ByKey<SaltedCounter> layouts_;
};

}  // namespace santral::router
