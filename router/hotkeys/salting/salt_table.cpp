#include "router/hotkeys/salting/salt_table.h"

namespace santral::router {

void SaltTable::rebuild(std::shared_ptr<const config::Config> config,
                        std::shared_ptr<const placement::ShardMap> map,
                        std::shared_ptr<const placement::ShardMap> naming,
                        std::shared_ptr<const SaltOverrides> overrides) {
  config_ = std::move(config);
  map_ = std::move(map);
  naming_ = std::move(naming);
  overrides_ = std::move(overrides);
  exact_.clear();
  layouts_.clear();
  ++generation_;
  has_patterns_ = false;
  for (const auto& rule : config_->salting) {
    if (rule.pattern)
      has_patterns_ = true;
    else
      exact_[rule.key] = {rule.salts, rule.reply, SaltedBy::Config};
  }
  bool any_override = false;
  if (overrides_)
    for (const auto& [key, salting] : overrides_->by_key) {
      if (salting) {
        exact_[key] = *salting;
        any_override = true;
      } else {
        exact_.erase(key);
      }
    }
  empty_ = exact_.empty() && !has_patterns_ && !any_override;
}

std::optional<SaltOverrides::Salting> SaltTable::salting_of(std::string_view key) const {
  if (auto found = exact_.find(key); found != exact_.end()) return found->second;
  if (!has_patterns_) return std::nullopt;
  if (overrides_ && overrides_->by_key.contains(std::string(key))) return std::nullopt;  // unsalted
  for (const auto& rule : config_->salting)
    if (rule.pattern && rule.pattern->match(key))
      return SaltOverrides::Salting{rule.salts, rule.reply, SaltedBy::Config};
  return std::nullopt;
}

const SaltedCounter* SaltTable::find(std::string_view key) {
  if (empty_) return nullptr;
  auto found = layouts_.find(key);
  if (found == layouts_.end()) {
    // Without patterns only the exact keys can be salted: no need to remember the others.
    if (!has_patterns_ && !exact_.contains(key)) return nullptr;
    if (layouts_.size() >= kMaxRemembered) {
      layouts_.clear();
      ++generation_;
    }
    auto salting = salting_of(key);
    SaltedCounter counter;
    if (salting) {
      counter = lay_out_counter(key, salting->salts, salting->reply, naming_ ? *naming_ : *map_);
      if (naming_)
        for (std::size_t i = 0; i < counter.sub_keys.size(); ++i)
          counter.shards[i] = map_->shard_for_key(counter.sub_keys[i]);
      counter.salted_by = salting->by;
    }
    found = layouts_.emplace(std::string(key), std::move(counter)).first;
  }
  return found->second.salts == 0 ? nullptr : &found->second;
}

std::vector<std::string> SaltTable::salted_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, salting] : exact_) keys.push_back(key);
  for (const auto& [key, counter] : layouts_)
    if (counter.salts > 0 && !exact_.contains(key)) keys.push_back(key);
  return keys;
}

}  // namespace santral::router

namespace santral::router {

// splitmix64: fast, and good enough to spread writes evenly.
std::uint32_t SaltTable::pick(std::uint32_t salts) {
  std::uint64_t z = (random_state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<std::uint32_t>((z >> 32) * salts >> 32);
}

}  // namespace santral::router
