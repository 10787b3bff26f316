#include "router/resharding/key_pull.h"

#include <memory>

#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "router/hotkeys/salting/salted_layout.h"
#include "router/merge/reply_merge.h"
#include "router/process/worker.h"
#include "router/resharding/migrate.h"
#include "router/session/client_session.h"

namespace santral::router {

namespace {

// The kinds of plan whose keys are stored keys on a shard.
bool touches_stored_keys(const Plan& plan) {
  switch (plan.kind) {
    case RouteKind::SingleShard:
    case RouteKind::Split:
    case RouteKind::Blocking:
    case RouteKind::Transaction:
    case RouteKind::Queued:
    case RouteKind::Salted:
    case RouteKind::NearCache:
      return plan.spec != nullptr && !plan.spec->has(protocol::kPubsub) && !plan.has_error();
    default:
      return false;
  }
}

void add_key(const config::Move& move, std::size_t owner, std::string_view key,
             std::vector<PullGroup>& groups) {
  auto source = move.source_of(key, owner);
  if (!source) return;
  for (auto& group : groups) {
    if (group.source == *source && group.target == owner) {
      group.keys.emplace_back(key);
      return;
    }
  }
  groups.push_back({*source, owner, {std::string(key)}});
}

// Counts the MIGRATE replies of one pull back in, and tells the session how it went.
class PullMerge final : public ReplyMerge {
 public:
  PullMerge(PullOutcome& outcome, std::vector<PullGroup> groups, config::TopologyPtr topology)
      : outcome_(outcome), groups_(std::move(groups)), topology_(std::move(topology)) {}

  void add(std::uint32_t fragment, std::string_view reply) override {
    if (migrated(reply) || !outcome_.error.empty() || fragment >= groups_.size()) return;
    const auto& group = groups_[fragment];
    outcome_.error = protocol::error_message(
        protocol::ClientError::MoveFailed, group.keys.front().substr(0, 64),
        topology_->map->shard(group.source).name, topology_->map->shard(group.target).name,
        protocol::one_line(reply_text(reply)));
  }
  void finish(std::string& /*out*/) override { outcome_.done = true; }

 private:
  PullOutcome& outcome_;
  std::vector<PullGroup> groups_;
  config::TopologyPtr topology_;  // the one the groups' shard indices are in
};

}  // namespace

std::vector<PullGroup> moving_keys(const config::Move& move, const config::ShardMap& map,
                                   const Plan& plan, const protocol::Request& request) {
  std::vector<PullGroup> groups;
  if (!touches_stored_keys(plan)) return groups;
  for (const auto& key : plan.keys) {
    add_key(move, key.owner.shard, request.args[key.position], groups);
    if (key.salted == nullptr) continue;
    for (const auto& sub_key : key.salted->sub_keys)
      add_key(move, map.shard_for_key(sub_key), sub_key, groups);
  }
  return groups;
}

void start_pull(ClientSession& session, std::vector<PullGroup> groups, std::uint64_t epoch) {
  auto& outcome = session.pull_outcome();
  outcome = {epoch, false, {}};
  auto fragments = static_cast<std::uint32_t>(groups.size());
  auto& worker = session.worker();
  auto slot = session.open_hidden_slot(
      fragments, std::make_unique<PullMerge>(outcome, groups, worker.topology_ptr()));
  if (worker.holding_moves()) return worker.hold_pull(session, slot, std::move(groups));
  send_pull(session, slot, groups);
}

void send_pull(ClientSession& session, std::uint64_t slot, const std::vector<PullGroup>& groups) {
  auto& worker = session.worker();
  const auto& config = worker.config();
  const auto& map = worker.shard_map();
  std::vector<std::string_view> keys;
  for (std::uint32_t i = 0; i < groups.size(); ++i) {
    const auto& group = groups[i];
    keys.assign(group.keys.begin(), group.keys.end());
    auto bytes =
        migrate_command(config, map.shard(group.target).address, session.profile().database, keys);
    session.shared_backend(group.source).send(bytes, &session, slot, i);
  }
}

}  // namespace santral::router
