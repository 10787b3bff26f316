#include "router/resharding/key_pull.h"

#include <memory>

#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "router/merge/reply_merge.h"
#include "router/process/worker.h"
#include "router/resharding/migrate.h"
#include "router/session/client_session.h"

namespace santral::router {

namespace {

// Counts the MIGRATE replies of one pull back in, and tells the session how it went.
class PullMerge final : public ReplyMerge {
 public:
  PullMerge(PullOutcome& outcome, std::vector<PullGroup> groups, config::TopologyPtr topology)
      : outcome_(outcome),
        request_(outcome.request),
        groups_(std::move(groups)),
        topology_(std::move(topology)) {}

  void add(std::uint32_t fragment, std::string_view reply) override {
    if (!mine() || migrated(reply) || !outcome_.error.empty() || fragment >= groups_.size()) return;
    const auto& group = groups_[fragment];
    outcome_.error = protocol::error_message(
        protocol::ClientError::MoveFailed, group.keys.front().substr(0, 64),
        topology_->map->shard(group.source).name, topology_->map->shard(group.target).name,
        protocol::one_line(reply_text(reply)));
  }
  void finish(std::string& /*out*/) override {
    if (mine()) outcome_.done = true;
  }

 private:
  // The session's outcome still names this pull's request and topology.
  bool mine() const {
    return outcome_.request == request_ && outcome_.topology_version == topology_->version;
  }

  PullOutcome& outcome_;
  std::uint64_t request_;
  std::vector<PullGroup> groups_;
  config::TopologyPtr topology_;  // the one the groups' shard indices are in
};

}  // namespace

void start_pull(ClientSession& session, const Plan& plan) {
  auto& outcome = session.pull_outcome();
  outcome = {session.requests_dispatched(), plan.topology_version, false, {}};
  const auto& groups = plan.pulls;
  auto fragments = static_cast<std::uint32_t>(groups.size());
  auto& worker = session.worker();
  auto slot = session.open_hidden_slot(
      fragments, std::make_unique<PullMerge>(outcome, groups, worker.topology_ptr()));
  if (worker.holding_moves()) return worker.hold_pull(session, slot, groups);
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
