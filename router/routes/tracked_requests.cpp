#include "router/routes/tracked_requests.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/command_table.h"
#include "router/backend/backend_connection.h"
#include "router/merge/gathered/gather_rules.h"
#include "router/merge/reply_merge.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"
#include "router/tracking/tracked_reads.h"
#include "router/tracking/tracking_lanes.h"

namespace santral::router {

namespace {

std::vector<std::string> key_names(const Routed& routed) {
  std::vector<std::string> keys;
  keys.reserve(routed.plan.keys.size());
  for (const auto& key : routed.plan.keys) keys.emplace_back(routed.request.args[key.position]);
  return keys;
}

void invalidate_now(PushChannel& client, const std::vector<std::string>& keys) {
  for (const auto& key : keys) client.invalidate(invalidation_push(key));
}

// Each fragment of a split request registers the keys it carries (PlannedKey::fragment).
void expect_split(const Routed& routed, std::uint64_t slot, std::uint64_t epoch,
                  TrackedReads::Awaited awaited = TrackedReads::Awaited::Read) {
  std::vector<std::vector<std::string>> keys(routed.plan.shards.size());
  for (const auto& key : routed.plan.keys)
    keys[key.fragment].emplace_back(routed.request.args[key.position]);
  for (std::uint32_t f = 0; f < keys.size(); ++f) {
    if (awaited == TrackedReads::Awaited::OwnWrite)
      routed.client.worker().lanes().writing_broadcast(routed.client.state().id, keys[f]);
    routed.client.caching().tracked_reads().expect(slot, f, epoch, std::move(keys[f]), awaited);
  }
}

// A gathered read (SINTER, ZUNION, ... across shards) sends each key its own fetches
// (first_fetch() numbers them); the first fetch's reply registers the key.
void expect_gathered(const Routed& routed, std::uint64_t slot, std::uint64_t epoch) {
  const GatherRule* rule = gather_rule(routed.spec);
  if (rule == nullptr || rule->fetch.empty())
    return invalidate_now(routed.client.pushes(), key_names(routed));
  const auto& keys = routed.plan.keys;
  for (std::size_t k = 0; k < keys.size(); ++k)
    routed.client.caching().tracked_reads().expect(
        slot, first_fetch(*rule, k), epoch, {std::string(routed.request.args[keys[k].position])});
}

void note_read(const Routed& routed, bool sent) {
  auto& client = routed.client;
  auto& lanes = client.worker().lanes();
  switch (routed.plan.kind) {
    case RouteKind::SingleShard:
      if (sent)
        client.caching().tracked_reads().expect(client.last_slot(), 0, lanes.epoch(),
                                                key_names(routed));
      return;
    case RouteKind::Split:
      if (sent) expect_split(routed, client.last_slot(), lanes.epoch());
      return;
    case RouteKind::Gathered:
      if (sent) expect_gathered(routed, client.last_slot(), lanes.epoch());
      return;
    case RouteKind::Queued:
      if (routed.plan.has_error()) return;
      if (routed.plan.shard)
        return lanes.track_queued_read(*routed.plan.shard, client.state().database,
                                       client.state().id, key_names(routed));
      client.caching().tracked_reads().read_in_multi(key_names(routed));
      return;
    case RouteKind::Answered:
    case RouteKind::Refused:
      return;
    default:  // a salted counter, a blocking read: nothing on a lane to hear its writes
      return invalidate_now(client.pushes(), key_names(routed));
  }
}

// NOLOOP: the client is not told of its own write. Its lanes' table forgets the keys; a BCAST
// client's keys are its own until the write's reply and a barrier behind it (own_writes.h), for
// the writes that go to shards on its lanes (others: it is told, which costs a cache miss).
void note_write(const Routed& routed, bool sent) {
  auto& client = routed.client;
  auto& lanes = client.worker().lanes();
  const auto& settings = client.state().tracking;
  if (settings.mode != TrackingSettings::Mode::Broadcast) {
    for (const auto& key : routed.plan.keys)
      lanes.writing(client.state().id, routed.request.args[key.position]);
    return;
  }
  if (!sent) return;
  switch (routed.plan.kind) {
    case RouteKind::SingleShard: {
      auto keys = key_names(routed);
      lanes.writing_broadcast(client.state().id, keys);
      client.caching().tracked_reads().expect(client.last_slot(), 0, lanes.epoch(), std::move(keys),
                                              TrackedReads::Awaited::OwnWrite);
      return;
    }
    case RouteKind::Split:
      return expect_split(routed, client.last_slot(), lanes.epoch(),
                          TrackedReads::Awaited::OwnWrite);
    default:
      return;
  }
}

// Counts a lane barrier's PINGs in; their slot is hidden, so it writes nothing.
class LanesAnswered final : public ReplyMerge {
 public:
  void add(std::uint32_t /*fragment*/, std::string_view /*reply*/) override {}
  void finish(std::string& /*out*/) override {}
};

// Hands the barrier's PING replies to the client's hidden slot, and counts them: a connection
// that is down answers at once, and a barrier answered whole before the request could wait must
// not wait (nothing would wake it).
class LaneBarrier final : public ReplySink {
 public:
  explicit LaneBarrier(RequestContext& client) : client_(&client) {}
  void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) override {
    ++answered_;
    client_->deliver(slot, fragment, reply);
  }
  std::size_t answered() const { return answered_; }

 private:
  ReplySinkPtr client_;
  std::size_t answered_ = 0;
};

}  // namespace

bool lanes_barrier_first(RequestContext& client, const Plan& plan) {
  if (!client.state().tracking.on || plan.kind != RouteKind::Local || plan.spec == nullptr)
    return false;
  auto local = plan.spec->local;
  if (local != protocol::LocalHandler::Ping && local != protocol::LocalHandler::Echo &&
      local != protocol::LocalHandler::ClientTracking)
    return false;
  auto& reads = client.caching().tracked_reads();
  if (reads.barrier_passed(client.state().requests_dispatched))
    return false;  // its PINGs are in: answer it
  auto connections = client.worker().lanes().pushing_to(client.state().id);
  if (connections.empty()) return false;
  auto fragments = static_cast<std::uint32_t>(connections.size());
  auto slot = client.open_hidden_slot(fragments, std::make_unique<LanesAnswered>());
  boost::intrusive_ptr<LaneBarrier> barrier(new LaneBarrier(client));
  for (std::uint32_t f = 0; f < fragments; ++f)
    connections[f]->send("*1\r\n$4\r\nPING\r\n", barrier, slot, f);
  if (barrier->answered() == fragments) return false;
  reads.barrier_for(client.state().requests_dispatched);
  return true;
}

void note_tracked_request(const Routed& routed, std::uint64_t slots_before) {
  auto& client = routed.client;
  auto& settings = client.state().tracking;
  if (!settings.on) return;
  const auto& spec = routed.spec;
  bool sent = client.opened_slots() != slots_before;
  if (!routed.plan.keys.empty()) {
    // A script may both write its keys and read them: Redis tracks its declared keys when it
    // called a read-only command, and the lane's tracking is Redis's own, so its keys are noted
    // as read (no invalidation comes for keys the lane did not track).
    bool script = protocol::runs_script(spec);
    if (!spec.has(protocol::kReadonly) && settings.noloop) note_write(routed, sent);
    if ((spec.has(protocol::kReadonly) || script) && settings.tracks_reads())
      note_read(routed, sent);
  }
  if (spec.stateful == protocol::StatefulKind::Transaction) {
    if (spec.verb == protocol::StatefulVerb::Exec)
      invalidate_now(client.pushes(), client.caching().tracked_reads().take_multi());
    if (spec.verb == protocol::StatefulVerb::Discard) client.caching().tracked_reads().take_multi();
  }
  // CLIENT CACHING applies to the next command, or to every command of the MULTI it precedes;
  // as in Redis, CLIENT's own subcommands (CACHING itself, TRACKINGINFO) leave it alone.
  if (!client.held().in_transaction() && !spec.name.starts_with("client|"))
    settings.caching.reset();
}

}  // namespace santral::router
