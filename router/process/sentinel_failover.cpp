// The server's side of Redis Sentinel: a shard naming a `sentinel_master` serves from the
// primary Sentinel elected, and reads from the replicas it lists (router/process/
// sentinel_follow.h asks; this puts the answers in force). The map names the shard, not its
// address, so a failover moves no key: it is a new topology with the same placement, and the
// workers' pools open connections to the new primary (those to the old one fail what they
// had in flight, as for a dead shard: its outcome unknown).
#include "router/process/sentinel_failover.h"

#include <algorithm>
#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/errors.h"
#include "router/backend/primary_lineage.h"

namespace santral::router {

void SentinelFailover::watch(const config::Config& config) {
  if (config.lost_writes_policy() == config::LostWritesPolicy::Accept) {
    bool let_go = false;
    {
      std::lock_guard guard(shared_.failover_lock);
      for (auto& [shard, lost] : shared_.lost_writes)
        if (lost.writes == LostWrites::Writes::Refused) {
          lost.writes = LostWrites::Writes::Served;
          let_go = true;
          spdlog::warn("shard '{}': writes go again (failover.on_lost_writes: accept)", shard);
        }
    }
    if (let_go) publish_refusals();
  }
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
  // Judged (and any refusal handed to the workers) before the workers may reach it.
  if (!elected.empty()) check_lineage(elected, from, view);
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

void SentinelFailover::check_lineage(const std::string& shard, const std::string& from,
                                     const SentinelView& view) {
  auto verdict = judge_lineage(shared_.primary_readings.last(from), from, view.replication,
                               view.replication_error);
  // The new primary is read anew from here on: the history it took over, then its own writes.
  auto to = view.primary.text();
  shared_.primary_readings.forget(to);
  auto history = read_replication_history(view.replication);
  if (history.role == "master" && history.readable())
    shared_.primary_readings.read(to, std::move(history.replid), history.offset);
  if (!verdict.loses_writes()) {
    bool still_refused = false;
    {
      std::lock_guard guard(shared_.failover_lock);
      auto lost = shared_.lost_writes.find(shard);
      still_refused =
          lost != shared_.lost_writes.end() && lost->second.writes == LostWrites::Writes::Refused;
    }
    spdlog::info("shard '{}': the new primary {} descends from {}: {}{}", shard, to, from,
                 verdict.why,
                 still_refused ? "; writes stay refused: the earlier loss is not accepted yet "
                                 "(SANTRAL FAILOVER ACCEPT)"
                               : "");
    return;
  }
  auto policy = host_.serving()->config->lost_writes_policy();
  bool refuse = policy == config::LostWritesPolicy::Refuse;
  {
    std::lock_guard guard(shared_.failover_lock);
    auto& lost = shared_.lost_writes[shard];
    lost.failover = {std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()), from,
                     to};
    lost.verdict = verdict;
    lost.writes = refuse ? LostWrites::Writes::Refused : LostWrites::Writes::Served;
    lost.accepted_unix_time = 0;
  }
  spdlog::error(
      "shard '{}': Sentinel promoted {} in place of {}, and {}: writes acknowledged on {} may be "
      "missing from it (lineage: {}). {}",
      shard, to, from, verdict.why, from, lineage_name(verdict.lineage),
      refuse ? fmt::format("Writes to '{}' are refused until an operator checks its data and "
                           "runs SANTRAL FAILOVER ACCEPT {} (failover.on_lost_writes: refuse); "
                           "reads are served",
                           shard, shard)
             : fmt::format("Writes to '{}' go on (failover.on_lost_writes: accept)", shard));
  publish_refusals();
}

void SentinelFailover::publish_refusals() {
  auto refusals = std::make_shared<WriteRefusals>();
  {
    std::lock_guard guard(shared_.failover_lock);
    for (const auto& [shard, lost] : shared_.lost_writes)
      if (lost.writes == LostWrites::Writes::Refused)
        refusals->shards.push_back({shard, lost.failover.from, lost.failover.to, lost.verdict.why});
  }
  publish_(std::move(refusals));
}

ControlPlane::FailoverAnswer SentinelFailover::accept(const std::string& shard) {
  std::string said;
  {
    std::lock_guard guard(shared_.failover_lock);
    auto lost = shared_.lost_writes.find(shard);
    if (lost == shared_.lost_writes.end()) {
      const auto& shards = host_.serving()->config->shards;
      bool known = std::any_of(shards.begin(), shards.end(),
                               [&](const config::ShardConfig& s) { return s.name == shard; });
      return {
          protocol::error_message(protocol::ClientError::FailoverNothingToAccept, shard,
                                  known ? "no failover of it lost writes since this router started"
                                        : "no shard has that name"),
          {}};
    }
    auto& report = lost->second;
    if (report.writes == LostWrites::Writes::Accepted)
      return {{},
              fmt::format("shard '{}': its failover to {} was accepted already", shard,
                          report.failover.to)};
    bool was_refused = report.writes == LostWrites::Writes::Refused;
    report.writes = LostWrites::Writes::Accepted;
    report.accepted_unix_time =
        std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    said = was_refused ? fmt::format(
                             "shard '{}' takes writes again, on {}; what it lacked of {} "
                             "stays lost",
                             shard, report.failover.to, report.failover.from)
                       : fmt::format("shard '{}': its failover to {} is accepted", shard,
                                     report.failover.to);
  }
  spdlog::warn("shard '{}': SANTRAL FAILOVER ACCEPT: {}", shard, said);
  publish_refusals();
  return {{}, said};
}

}  // namespace santral::router
