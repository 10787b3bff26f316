#include "router/hotkeys/near_cache_route.h"

#include <string>

#include "protocol/key_extraction.h"
#include "router/client_session.h"
#include "router/hotkeys/near_cache.h"
#include "router/hotkeys/tracking_connections.h"
#include "router/worker.h"

namespace santral::router {

namespace {

const protocol::CommandSpec* get_command() {
  static const protocol::CommandSpec* const get = protocol::find_command("get");
  return get;
}

// The reply to a fill: stored when still fresh, then passed on to the client. The tracking
// connection speaks RESP3, whose nil a RESP2 client reads as `$-1`.
class NearCacheFill final : public ReplySink {
 public:
  NearCacheFill(ClientSession& session, std::uint64_t slot, std::string_view key, std::size_t shard,
                std::uint64_t seq)
      : session_(&session), slot_(slot), key_(key), shard_(shard), seq_(seq) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view reply) override {
    session_->worker().near_cache().finish_fill(key_, shard_, seq_, reply);
    session_->fill_finished();
    if (reply == NearCache::kNil && session_->state().protocol == 2) reply = "$-1\r\n";
    session_->deliver(slot_, 0, reply);
  }

 private:
  boost::intrusive_ptr<ClientSession> session_;
  std::uint64_t slot_;
  std::string key_;
  std::size_t shard_;
  std::uint64_t seq_;
};

}  // namespace

bool route_near_cache(const Routed& routed) {
  auto& session = routed.session;
  auto& worker = session.worker();
  const auto& map = worker.shard_map();
  if (&routed.spec != get_command() || routed.request.args.size() != 2) return false;
  std::string_view key = routed.request.args[1];
  // Only the clients' default database is cached; a write of this client still in flight
  // elsewhere must be seen by its later reads, which therefore go the usual way.
  if (session.state().database != worker.config().backend.database || !map.near_cached(key) ||
      !session.writes_answered())
    return false;
  auto& cache = worker.near_cache();
  if (const std::string* reply = cache.find(key)) {
    bool resp2_nil = *reply == NearCache::kNil && session.state().protocol == 2;
    session.reply(resp2_nil ? std::string_view("$-1\r\n") : std::string_view(*reply));
    return true;
  }
  if (!cache.admitted(key)) return false;
  std::size_t shard = map.shard_for_key(key);
  BackendConnection* tracking = worker.tracking().ready(shard);
  if (tracking == nullptr) return false;
  std::uint64_t seq = cache.begin_fill(key);
  auto slot = session.open_slot();
  session.fill_started();
  tracking->send(request_bytes(routed), new NearCacheFill(session, slot, key, shard, seq), slot, 0);
  return true;
}

void forget_written_keys(const Routed& routed) {
  auto& cache = routed.session.worker().near_cache();
  auto& positions = routed.session.key_positions();
  if (!protocol::find_keys(routed.spec, routed.request.args, positions)) return;
  for (std::uint32_t position : positions) cache.invalidate(routed.request.args[position]);
}

}  // namespace santral::router
