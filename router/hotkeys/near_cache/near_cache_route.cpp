#include "router/hotkeys/near_cache/near_cache_route.h"

#include <charconv>
#include <chrono>
#include <string>

#include "protocol/resp_writer.h"
#include "router/hotkeys/near_cache/near_cache.h"
#include "router/hotkeys/near_cache/tracking_connections.h"
#include "router/hotkeys/near_cache/write_coherence.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

using Clock = NearCache::Clock;

// The replies to a fill, `GET k` then `PTTL k` on the tracking connection. GET's goes to the
// client at once (RESP3's nil is `$-1` for a RESP2 client) and is kept; PTTL's says how long it
// may be served. It is stored only after both, so an invalidation read in between spoils it.
class NearCacheFill final : public ReplySink {
 public:
  static constexpr std::uint32_t kGet = 0;
  static constexpr std::uint32_t kPttl = 1;

  NearCacheFill(RequestContext& client, std::uint64_t slot, std::string_view key, std::size_t shard,
                std::uint64_t seq, Clock::time_point sent)
      : session_(&client), slot_(slot), key_(key), shard_(shard), seq_(seq), sent_(sent) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t fragment, std::string_view reply) override {
    auto& cache = session_->worker().near_cache();
    if (fragment == kGet) {
      if (cache.storable(reply)) value_.assign(reply);
      session_->caching().coherence().fill_finished();
      if (reply == NearCache::kNil && session_->state().protocol == 2) reply = "$-1\r\n";
      session_->deliver(slot_, 0, reply);
      return;
    }
    // -1: no expiry; -2: no key (a value read by GET expired since: not stored); else the
    // milliseconds left, counted from the send, which is no later than Redis's own count.
    long long pttl = -2;
    bool integer =
        reply.size() > 3 && reply.front() == ':' &&
        std::from_chars(reply.data() + 1, reply.data() + reply.size() - 2, pttl).ec == std::errc();
    if (!integer || (pttl == -2 && value_ != NearCache::kNil)) value_.clear();
    auto expires = pttl >= 0 ? sent_ + std::chrono::milliseconds(pttl) : Clock::time_point::max();
    cache.finish_fill(key_, shard_, seq_, value_, expires);
  }

 private:
  boost::intrusive_ptr<RequestContext> session_;
  std::uint64_t slot_;
  std::string key_;
  std::size_t shard_;
  std::uint64_t seq_;
  Clock::time_point sent_;
  std::string value_;  // GET's reply when storable
};

std::string pttl_request(std::string_view key) {
  std::string request;
  protocol::RespWriter writer(request);
  std::string_view args[] = {"PTTL", key};
  writer.command(args);
  return request;
}

}  // namespace

namespace {

// From memory, or filled on the tracking connection; false: the usual way.
bool answer_near(const Routed& routed) {
  auto& client = routed.client;
  auto& worker = client.worker();
  std::string_view key = routed.request.args[1];
  // A write of this client still in flight elsewhere must be seen by its later reads, which
  // therefore go the usual way.
  if (!client.caching().writes_answered()) return false;
  auto& cache = worker.near_cache();
  auto now = Clock::now();
  if (const std::string* reply = cache.find(key, now)) {
    bool resp2_nil = *reply == NearCache::kNil && client.state().protocol == 2;
    client.reply(resp2_nil ? std::string_view("$-1\r\n") : std::string_view(*reply));
    return true;
  }
  if (!cache.admitted(key)) return false;
  std::size_t shard = *routed.plan.shard;
  BackendConnection* tracking = worker.near_cache_connections().ready(shard);
  if (tracking == nullptr) return false;
  std::uint64_t seq = cache.begin_fill(key);
  auto slot = client.open_slot();
  client.caching().coherence().fill_started();
  ReplySinkPtr fill(new NearCacheFill(client, slot, key, shard, seq, now));
  tracking->send(request_bytes(routed), fill, slot, NearCacheFill::kGet);
  tracking->send(pttl_request(key), fill, slot, NearCacheFill::kPttl);
  return true;
}

}  // namespace

void route_near_cache(const Routed& routed) {
  if (!answer_near(routed)) route_single_shard(routed);
}

void forget_written_keys(const Routed& routed) {
  auto& client = routed.client;
  auto& cache = client.worker().near_cache();
  for (const auto& planned : routed.plan.keys) {
    std::string_view key = routed.request.args[planned.position];
    if (!cache.may_hold(key)) continue;
    cache.invalidate(key);
    client.caching().coherence().forget_when_answered(key);
  }
}

void forget_all_keys(const Routed& routed) {
  routed.client.worker().near_cache().invalidate_all();
  routed.client.caching().coherence().forget_when_answered({}, true);
}

}  // namespace santral::router
