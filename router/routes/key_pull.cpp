#include "router/routes/key_pull.h"
#include "protocol/reply_scanner.h"

#include <memory>

#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "router/merge/reply_merge.h"
#include "router/resharding/marked_migrate.h"
#include "router/resharding/migrate.h"
#include "router/resharding/migration_gate.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

// Counts the MIGRATE replies of one pull back in, and tells the client how it went.
class PullMerge final : public ReplyMerge {
 public:
  PullMerge(PullOutcome& outcome, std::vector<PullGroup> groups, placement::TopologyPtr topology)
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
        protocol::one_line(protocol::line_text(reply)));
  }
  void finish(std::string& /*out*/) override {
    if (mine()) outcome_.done = true;
  }

 private:
  // The client's outcome still names this pull's request and topology.
  bool mine() const {
    return outcome_.request == request_ && outcome_.topology_version == topology_->version;
  }

  PullOutcome& outcome_;
  std::uint64_t request_;
  std::vector<PullGroup> groups_;
  placement::TopologyPtr topology_;  // the one the groups' shard indices are in
};

}  // namespace

void start_pull(RequestContext& client, const Plan& plan) {
  auto& outcome = client.pull_outcome();
  outcome = {client.state().requests_dispatched, plan.topology_version, false, {}};
  const auto& groups = plan.pulls;
  auto fragments = static_cast<std::uint32_t>(groups.size());
  auto& worker = client.worker();
  auto slot = client.open_hidden_slot(
      fragments, std::make_unique<PullMerge>(outcome, groups, worker.topology_ptr()));
  if (worker.holding_moves()) return worker.hold_pull(client, slot, groups);
  send_pull(client, slot, groups);
}

namespace {

// Sends a pull's MIGRATEs one group after the other, each once the migration gate lets it
// (migration_gate.h; in a fleet behind a receiving mark too, marked_migrate.h), and hands each
// reply to the client's pull slot. A switch of direction meanwhile ends what is not sent yet
// as if nothing moved: the request is pulled again the new way.
class PullChain final : public ReplySink {
 public:
  PullChain(RequestContext& client, std::uint64_t slot, std::vector<PullGroup> groups)
      : session_(&client),
        slot_(slot),
        groups_(std::move(groups)),
        direction_(client.worker().direction()) {}

  void next() {
    if (group_ >= groups_.size()) return;
    if (session_->link().closed()) return;
    auto& worker = session_->worker();
    if (worker.direction() != direction_) return give_up();
    const auto& map = worker.shard_map();
    const auto& group = groups_[group_];
    claim_ = {{map.shard(group.source).address.text()}, {map.shard(group.target).address.text()}};
    worker.migrations().enter(worker.io(), claim_,
                              [self = boost::intrusive_ptr<PullChain>(this)] { self->send(); });
  }

  void deliver(std::uint64_t, std::uint32_t fragment, std::string_view reply) override {
    session_->deliver(slot_, fragment, reply);
    ++group_;
    next();
  }

 private:
  void send() {
    auto& worker = session_->worker();
    if (worker.direction() != direction_) {
      worker.migrations().leave(claim_);
      return give_up();
    }
    const auto& group = groups_[group_];
    std::vector<std::string_view> keys(group.keys.begin(), group.keys.end());
    auto still_wanted = [client = session_, direction = direction_] {
      return client->worker().direction() == direction;
    };
    auto migrate =
        plan_migrate(worker.config(), worker.shard_map().shard(group.target).address,
                     session_->profile().database, keys, session_->shared_backend(group.source),
                     session_->shared_backend(group.target), still_wanted);
    // The claim is held until the MIGRATE is over, which a timeout is not (marked_migrate.h).
    migrate.settled = [gate = &worker.migrations(), claim = claim_] { gate->leave(claim); };
    send_migrate(worker.io(), std::move(migrate), ReplySinkPtr(this), slot_, group_);
  }

  void give_up() {
    for (; group_ < groups_.size(); ++group_) session_->deliver(slot_, group_, "+NOKEY\r\n");
  }

  boost::intrusive_ptr<RequestContext> session_;
  std::uint64_t slot_;
  std::vector<PullGroup> groups_;
  std::uint32_t group_ = 0;
  std::uint64_t direction_;  // the worker's, when the pull was sent
  MigrationGate::Claim claim_;
};

}  // namespace

void send_pull(RequestContext& client, std::uint64_t slot, const std::vector<PullGroup>& groups) {
  boost::intrusive_ptr<PullChain>(new PullChain(client, slot, groups))->next();
}

}  // namespace santral::router
