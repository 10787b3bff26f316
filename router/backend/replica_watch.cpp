#include "router/backend/replica_watch.h"

#include <set>

#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

// The answers to one ask of one shard: fragment 0 from the primary, 1 + r from replica r.
class ReplicaWatch::AnswerSink final : public ReplySink {
 public:
  AnswerSink(ReplicaWatch& watch, std::string primary, std::chrono::milliseconds max_lag)
      : watch_(watch), primary_(std::move(primary)), max_lag_(max_lag) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t server, std::string_view reply) override {
    watch_.answered(primary_, server, reply, max_lag_);
  }

 private:
  ReplicaWatch& watch_;
  std::string primary_;
  std::chrono::milliseconds max_lag_;
};

void ReplicaWatch::tick(ConnectionPool& pool, const placement::Topology& topology,
                        std::chrono::steady_clock::time_point now) {
  if (now - last_ask_ < kPeriod) return;
  last_ask_ = now;
  auto command = [](std::string_view section) {
    std::string out;
    protocol::RespWriter(out).command(std::vector<std::string_view>{"INFO", section});
    return out;
  };
  static const std::string info = command("replication");
  static const std::string changes = command("persistence");
  const auto& map = *topology.map;
  auto profile = pool.default_profile();
  std::set<std::string> present;
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    const auto& shard = map.shard(s);
    if (shard.replicas.empty() && shard.sentinel_master.empty()) continue;
    std::string primary = shard.address.text();
    present.insert(primary);
    // In place: a connection that is down answers at once, from inside send().
    auto& watched = watched_[primary];
    watched.replicas = pool.replica_states(s);
    if (watched.awaited != 0) continue;
    bool lineage = !shard.sentinel_master.empty();
    watched.awaited = 1 + shard.replicas.size() + (lineage ? 1 : 0);
    ReplySinkPtr sink(new AnswerSink(*this, primary, topology.config->replica_max_lag));
    // Its count of changes first: a reading is kept once that has moved (answered()).
    if (lineage) pool.shared(s, profile, 0).send(changes, sink, 0, kChanges);
    pool.shared(s, profile, 0).send(info, sink, 0, 0);
    for (std::size_t r = 0; r < shard.replicas.size(); ++r)
      pool.replica(s, r, profile).send(info, sink, 0, static_cast<std::uint32_t>(1 + r));
  }
  std::erase_if(watched_, [&present](const auto& entry) { return !present.contains(entry.first); });
}

void ReplicaWatch::answered(const std::string& primary, std::size_t server, std::string_view reply,
                            std::chrono::milliseconds max_lag) {
  auto it = watched_.find(primary);
  if (it == watched_.end()) return;  // a shard no longer in the map
  auto& watched = it->second;
  if (watched.awaited > 0) --watched.awaited;
  auto now = std::chrono::steady_clock::now();
  protocol::ReplyValue value;
  bool read = !reply.empty() && reply.front() != '-' && protocol::parse_reply(reply, value);
  auto why_not = [&reply] {
    return protocol::one_line(reply.size() > 3 ? reply.substr(1, reply.size() - 3)
                                               : std::string_view("no answer"));
  };
  if (server == kChanges) {
    watched.changes = read ? changes_mark(value.text) : std::string();
    return;
  }
  if (server == 0) {
    if (!read) return readings_.unread(primary, "INFO replication was not answered: " + why_not());
    watched.primary.add(now, read_primary_offset(value.text));
    // Only while it is a primary: a demoted one follows its successor's history.
    auto history = read_replication_history(value.text);
    if (history.role != "master" || !history.readable()) return;
    // The offset its latest write reached: kept only once Redis's count of changes has moved
    // (or its history changed), so that the PINGs a primary sends its replicas every 10 s
    // after its last write, which a promoted replica may lack, are not taken for writes.
    // Without the count (INFO persistence refused) every reading is kept.
    if (watched.changes.empty() || watched.changes != watched.kept_changes ||
        history.replid != watched.kept_replid) {
      watched.kept_changes = watched.changes;
      watched.kept_replid = history.replid;
      readings_.read(primary, std::move(history.replid), history.offset);
    }
    return;
  }
  if (server - 1 >= watched.replicas.size() || !watched.replicas[server - 1]) return;
  auto& state = *watched.replicas[server - 1];
  if (!read)
    return state.set(ReplicaFreshness::Verdict::Stale, -1,
                     "INFO replication was not answered: " + why_not());
  auto judged = judge_replica(read_replica_info(value.text), watched.primary, now, max_lag);
  state.set(judged.verdict, judged.lag_ms, std::move(judged.why));
}

}  // namespace santral::router
