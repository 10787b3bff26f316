#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "router/backend/backend_connection.h"
#include "router/routes/routing.h"

namespace santral::router {

class RequestContext;

// Where a channel's messages come from: a key's notifications from the key's shard
// ("__keyspace@0__:k"), key events from every shard ("__keyevent@0__:expired"), any other
// channel from the shard that owns its name (where PUBLISH sends it). Sharded channels
// (SSUBSCRIBE) always by name. SANTRAL EXPLAIN says the same.
std::vector<std::size_t> channel_shards(const placement::ShardMap& map, std::string_view channel,
                                        bool sharded);

// One client's pub/sub. A channel lives on the shard that owns its name (PUBLISH is routed
// the same way), so SUBSCRIBE goes to that shard; a pattern can match channels anywhere, so
// PSUBSCRIBE goes to every shard. Each shard the client listens to gets one connection of the
// client's own; messages from it are passed on as they arrive, so the messages of one channel
// keep their order. Confirmations are Santral's, with counts over all shards, and are sent
// once every shard involved has confirmed.
class Subscriptions {
 public:
  int channels() const { return static_cast<int>(channels_.size()); }
  int patterns() const { return static_cast<int>(patterns_.size()); }
  int shard_channels() const { return static_cast<int>(shard_channels_.size()); }
  int count() const { return channels() + patterns() + shard_channels(); }

  void subscribe(const Routed& routed);    // SUBSCRIBE, SSUBSCRIBE
  void unsubscribe(const Routed& routed);  // UNSUBSCRIBE, SUNSUBSCRIBE
  void psubscribe(const Routed& routed);
  void punsubscribe(const Routed& routed);

  // A message pushed by the connection to `shard`.
  void message(RequestContext& client, std::size_t shard, std::string_view frame);
  // The client left or sent RESET.
  void abandon(RequestContext& client);

 private:
  BackendConnection& connection(RequestContext& client, std::size_t shard);

  std::set<std::string> channels_;
  std::set<std::string> patterns_;
  std::set<std::string> shard_channels_;
  // By the shard's address, so that a reload that renumbers shards keeps them right.
  std::map<std::string, BackendConnectionPtr> connections_;
};

}  // namespace santral::router
