#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include <span>

#include "placement/topology.h"
#include "protocol/reply_value.h"
#include "router/backend/backend_connection.h"
#include "router/metrics/stats.h"
#include "router/tracking/own_writes.h"
#include "router/tracking/tracked_keys.h"
#include "router/tracking/tracking_client.h"

namespace santral::router {

// Client-side caching through Santral: one worker's "tracking lanes".
//
// A lane is a RESP3 connection to a shard's primary with CLIENT TRACKING ON, shared by the
// worker's tracking clients as a shared connection is by the others: every command a tracking
// client sends to that shard goes over its lane. Redis pushes `invalidate` on the lane, in
// order with the lane's replies, so Santral can tell whose reads an invalidation concerns:
//
//   client A: GET k ─┐                    lane to k's shard
//   client B: GET k ─┼─► GET k, GET k ──► Redis tracks k for the lane
//                    │   reply A ◄─────── Santral: A read k   (registered when the reply is read)
//                    │   reply B ◄─────── Santral: B read k
//   SET k (anywhere) │   >invalidate k ◄─ Santral: A and B are told, after what they are owed
//
// A client is registered for a key when the reply to its read is read off the lane, never
// before: an invalidation that arrives earlier is for a write that the read already saw.
// A BCAST client gets the pushes of a broadcast connection per shard (CLIENT TRACKING ON
// BCAST) for the keys matching its prefixes. When a lane or broadcast connection is lost, or
// a reload replaces the lanes, Redis forgets what it tracked for them: their clients get the
// null invalidation, which makes a client library drop its whole cache.
class TrackingLanes {
 public:
  TrackingLanes(boost::asio::io_context& io, WorkerStats& stats, FindTrackingClient find_client);
  ~TrackingLanes();
  TrackingLanes(const TrackingLanes&) = delete;
  TrackingLanes& operator=(const TrackingLanes&) = delete;

  // A reload: the lanes of the old topology finish what they carry and close; their clients
  // get the null invalidation, and the reads still in flight on them are not kept.
  void apply(placement::TopologyPtr topology);
  void stop();
  void check_deadlines(std::chrono::steady_clock::time_point now);
  // Every lane that may still carry a request routed before now, retired ones included (a
  // barrier waits them out; router/routes/in_flight_barrier.h). Lanes carry a tracking client's
  // writes too.
  std::vector<BackendConnectionPtr> barrier_connections() const;

  // The lane to `shard` for a client of `database`, opened on first use.
  BackendConnection& lane(std::size_t shard, int database, std::uint64_t client);
  // A BCAST client: the broadcast connections of every shard, opened for it.
  std::vector<BackendConnection*> broadcast_to(std::uint64_t client, int database);
  // The connections `client`'s invalidations come on: the lanes it has sent requests on since
  // they were opened (or lost), and the broadcast connections it was a BCAST client of. A PING
  // down each brings, before its reply, every push Redis queued on them before it.
  std::vector<BackendConnection*> pushing_to(std::uint64_t client) const;

  // A tracking client closed: the lanes stop remembering it.
  void forget_client(std::uint64_t client);
  // Lanes change on reload; a read sent on an older one is told about at once instead.
  std::uint64_t epoch() const { return epoch_; }
  // A read queued in MULTI runs on the transaction's connection, which tracks nothing: an
  // EXISTS of its keys on the client's lane to `shard` first makes the lane track them (before
  // EXEC reads them), and registers the client when it is answered.
  void track_queued_read(std::size_t shard, int database, std::uint64_t client,
                         std::vector<std::string> keys);
  // The reply to `client`'s tracked read of `key`, sent in lane epoch `epoch`, has arrived.
  void read_arrived(std::uint64_t client, std::string_view key, std::uint64_t epoch);
  // NOLOOP: `client` is about to write `key`; it is not told about its own write.
  void writing(std::uint64_t client, std::string_view key) { keys_.forget(key, client); }
  // BCAST NOLOOP: `client` is sending a write of `keys`; until own_write_answered() and its
  // PINGs, their broadcast invalidations are its own (router/tracking/own_writes.h).
  void writing_broadcast(std::uint64_t client, std::span<const std::string> keys) {
    own_writes_.writing(client, keys);
  }
  // That write's reply arrived: a PING on each of `database`'s broadcast connections, and
  // when all have answered, the keys are no longer the client's own.
  void own_write_answered(std::uint64_t client, int database, std::vector<std::string> keys);
  void set_max_keys(std::size_t max_keys) { keys_.set_max_keys(max_keys); }
  std::size_t tracked_keys() const { return keys_.size(); }

  // What a lane's or broadcast connection's push sink reports (tracking_lanes.cpp).
  struct LaneId {
    std::size_t shard;
    int database;
    bool broadcast;
    bool operator<(const LaneId& other) const {
      return std::tie(shard, database, broadcast) <
             std::tie(other.shard, other.database, other.broadcast);
    }
  };
  void pushed(const LaneId& lane, std::string_view frame);
  void lost(const LaneId& lane);

 private:
  struct Lane {
    BackendConnectionPtr connection;
    std::unordered_set<std::uint64_t> clients;  // told when the lane's tracking is lost
  };
  Lane& open(const LaneId& id);
  void tell(std::uint64_t client, std::string_view push, bool broadcast_only);
  void tell_everyone(const Lane& lane, bool broadcast);
  void invalidate_keys(std::span<const protocol::ReplyValue> keys);
  void broadcast_keys(std::span<const protocol::ReplyValue> keys);

  boost::asio::io_context& io_;
  WorkerStats& stats_;
  FindTrackingClient find_client_;
  placement::TopologyPtr topology_;
  std::map<LaneId, Lane> lanes_;
  std::vector<BackendConnectionPtr> retired_;
  std::unordered_map<std::uint64_t, int> broadcast_clients_;  // client -> its database
  // Clients told to flush everything that have had no read registered since: a FLUSHALL
  // reaches them over several lanes, and Redis tells them once.
  std::unordered_set<std::uint64_t> flushed_;
  TrackedKeys keys_;
  OwnWrites own_writes_;
  std::uint64_t epoch_ = 1;
};

}  // namespace santral::router
