// The server's side of Redis Sentinel: a shard naming a `sentinel_master` serves from the
// primary Sentinel elected, and reads from the replicas it lists (router/process/
// sentinel_follow.h asks; this puts the answers in force). The map names the shard, not its
// address, so a failover moves no key: it is a new topology with the same placement, and the
// workers' pools open connections to the new primary (those to the old one fail what they
// had in flight, as for a dead shard: its outcome unknown).
#include "router/process/sentinel_failover.h"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace santral::router {

void SentinelFailover::watch(const config::Config& config) {
  bool named = false;
  for (const auto& shard : config.shards) named = named || !shard.sentinel_master.empty();
  if (!named) {
    follow_.reset();
    return;
  }
  if (!follow_)
    follow_ = std::make_unique<SentinelFollow>(
        io_, [this](const std::string& master, const SentinelView& view) { heard(master, view); });
  follow_->watch(config);
}

void SentinelFailover::heard(const std::string& master, const SentinelView& view) {
  if (stopped_) return;
  // Asked every 250 ms and at each event: most answers change nothing, and cost no copy of
  // the config.
  bool news = false;
  for (const auto& shard : host_.serving()->config->shards)
    news = news || (shard.sentinel_master == master &&
                    (shard.address != view.primary || shard.replicas != view.replicas));
  if (!news) return;
  auto next = *host_.serving()->config;
  std::string elected;  // the shard whose primary changed
  std::string from;
  for (auto& shard : next.shards) {
    if (shard.sentinel_master != master) continue;
    if (shard.address != view.primary) {
      from = shard.address.text();
      shard.address = view.primary;
      elected = shard.name;
    }
    shard.replicas = view.replicas;
  }
  // A move's topology holds two maps built from the config it started with: the new primary
  // is put in force once the move has ended (its walk and pulls to the old one fail meanwhile).
  if (driver_->under_way()) {
    if (!std::exchange(waits_for_move_, true))
      spdlog::warn(
          "Sentinel ({}) names {} as the primary of '{}'; a move is under way: it is used once "
          "the move has ended (SANTRAL RESHARD ABORT ends it now)",
          view.sentinel, view.primary.text(), master);
    return;
  }
  waits_for_move_ = false;
  auto topology = std::make_shared<placement::Topology>(
      *placement::make_topology(std::move(next), host_.next_version()));
  // The same map: in a fleet, the version etcd holds.
  topology->map_version = host_.serving()->map_version;
  topology->salt_naming = host_.serving()->salt_naming;
  host_.put_in_force(topology);
  if (elected.empty()) {
    spdlog::info("Sentinel ({}) lists {} replica{} of '{}' in sync", view.sentinel,
                 view.replicas.size(), view.replicas.size() == 1 ? "" : "s", master);
    return;
  }
  spdlog::warn(
      "shard '{}': Sentinel ({}) elected {} as the primary of '{}' (it answers ROLE as master); "
      "was {}; requests go there now",
      elected, view.sentinel, view.primary.text(), master, from);
  std::lock_guard guard(shared_.failover_lock);
  shared_.failovers[elected] = {
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()), from,
      view.primary.text()};
}

}  // namespace santral::router
