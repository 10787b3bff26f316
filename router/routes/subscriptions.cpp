#include "router/routes/subscriptions.h"

#include <functional>
#include <optional>

#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::StatefulVerb;

namespace {

// The client's confirmations, composed when the command is handled and sent once every shard
// has confirmed its part, so a client that sees "subscribe" can rely on getting messages.
class ConfirmWhenDone final : public ReplyMerge {
 public:
  explicit ConfirmWhenDone(std::string reply) : reply_(std::move(reply)) {}
  void add(std::uint32_t, std::string_view reply) override {
    if (error_.empty() && protocol::is_error_frame(reply)) error_ = reply;
  }
  void finish(std::string& out) override { out = error_.empty() ? reply_ : error_; }

 private:
  std::string reply_;
  std::string error_;
};

void confirmation(std::string& out, int protocol, std::string_view kind,
                  std::optional<std::string_view> name, int count) {
  out += protocol == 3 ? ">3\r\n" : "*3\r\n";
  protocol::RespWriter writer(out);
  writer.bulk(kind);
  if (name) {
    writer.bulk(*name);
  } else {
    out += protocol == 3 ? "_\r\n" : "$-1\r\n";
  }
  writer.integer(count);
}

std::string command(std::string_view name, std::string_view argument) {
  std::string out;
  std::string_view args[] = {name, argument};
  protocol::RespWriter(out).command(args);
  return out;
}

struct Send {
  std::size_t shard;
  std::string bytes;
};

// The key of a keyspace notification channel ("__keyspace@0__:<key>"), or nullopt.
std::optional<std::string_view> keyspace_key(std::string_view channel) {
  constexpr std::string_view kPrefix = "__keyspace@";
  if (!channel.starts_with(kPrefix)) return std::nullopt;
  std::size_t at = kPrefix.size();
  while (at < channel.size() && channel[at] >= '0' && channel[at] <= '9') ++at;
  if (at == kPrefix.size() || channel.substr(at, 3) != "__:") return std::nullopt;
  return channel.substr(at + 3);
}

void send_all(RequestContext& client, std::string reply, std::vector<Send> sends,
              const std::function<BackendConnection&(std::size_t)>& connection) {
  if (sends.empty()) return client.reply(reply);
  auto slot = client.open_slot(static_cast<std::uint32_t>(sends.size()),
                               std::make_unique<ConfirmWhenDone>(std::move(reply)));
  for (std::uint32_t i = 0; i < sends.size(); ++i)
    connection(sends[i].shard).send(sends[i].bytes, &client, slot, i);
}

}  // namespace

std::vector<std::size_t> channel_shards(const placement::ShardMap& map, std::string_view channel,
                                        bool sharded) {
  if (!sharded) {
    if (auto key = keyspace_key(channel)) return {map.shard_for_key(*key)};
    if (channel.starts_with("__keyevent@")) {
      std::vector<std::size_t> all(map.shard_count());
      for (std::size_t s = 0; s < all.size(); ++s) all[s] = s;
      return all;
    }
  }
  return {map.shard_for_key(channel)};
}

void route_subscription(const Routed& routed) {
  // Confirmations are pushes: Redis sends them even after CLIENT REPLY OFF or SKIP.
  routed.client.set_silent(false);
  auto& subscriptions = routed.client.held().subscriptions();
  switch (routed.spec.verb) {
    case StatefulVerb::Subscribe:
    case StatefulVerb::ShardSubscribe:
      return subscriptions.subscribe(routed);
    case StatefulVerb::Unsubscribe:
    case StatefulVerb::ShardUnsubscribe:
      return subscriptions.unsubscribe(routed);
    case StatefulVerb::PatternSubscribe:
      return subscriptions.psubscribe(routed);
    default:  // StatefulVerb::PatternUnsubscribe
      return subscriptions.punsubscribe(routed);
  }
}

BackendConnection& Subscriptions::connection(RequestContext& client, std::size_t shard) {
  auto& connection = connections_[client.worker().shard_map().shard(shard).address.text()];
  if (!connection) {
    connection = client.worker().pool().subscriber(shard, client.profile());
    connection->set_push_sink(&client);
  }
  return *connection;
}

void Subscriptions::subscribe(const Routed& routed) {
  auto& client = routed.client;
  bool sharded = routed.spec.verb == StatefulVerb::ShardSubscribe;
  auto& names = sharded ? shard_channels_ : channels_;
  std::string_view kind = sharded ? "ssubscribe" : "subscribe";
  std::string_view backend_command = sharded ? "SSUBSCRIBE" : "SUBSCRIBE";
  const auto& map = client.worker().shard_map();
  std::string reply;
  std::vector<Send> sends;
  for (std::size_t i = 1; i < routed.request.args.size(); ++i) {
    std::string_view channel = routed.request.args[i];
    if (names.emplace(channel).second)
      for (std::size_t shard : channel_shards(map, channel, sharded))
        sends.push_back({shard, command(backend_command, channel)});
    confirmation(reply, client.state().protocol, kind, channel,
                 sharded ? shard_channels() : channels() + patterns());
  }
  send_all(client, std::move(reply), std::move(sends),
           [&](std::size_t shard) -> BackendConnection& { return connection(client, shard); });
}

void Subscriptions::unsubscribe(const Routed& routed) {
  auto& client = routed.client;
  bool sharded = routed.spec.verb == StatefulVerb::ShardUnsubscribe;
  auto& names = sharded ? shard_channels_ : channels_;
  std::string_view kind = sharded ? "sunsubscribe" : "unsubscribe";
  std::string_view backend_command = sharded ? "SUNSUBSCRIBE" : "UNSUBSCRIBE";
  const auto& map = client.worker().shard_map();
  std::vector<std::string> targets;
  for (std::size_t i = 1; i < routed.request.args.size(); ++i)
    targets.emplace_back(routed.request.args[i]);
  if (routed.request.args.size() == 1) targets.assign(names.begin(), names.end());
  std::string reply;
  std::vector<Send> sends;
  for (const auto& channel : targets) {
    if (names.erase(channel) > 0)
      for (std::size_t shard : channel_shards(map, channel, sharded))
        sends.push_back({shard, command(backend_command, channel)});
    confirmation(reply, client.state().protocol, kind, channel,
                 sharded ? shard_channels() : channels() + patterns());
  }
  if (targets.empty())
    confirmation(reply, client.state().protocol, kind, std::nullopt,
                 sharded ? shard_channels() : channels() + patterns());
  send_all(client, std::move(reply), std::move(sends),
           [&](std::size_t shard) -> BackendConnection& { return connection(client, shard); });
}

void Subscriptions::psubscribe(const Routed& routed) {
  auto& client = routed.client;
  std::size_t shards = client.worker().shard_map().shard_count();
  std::string reply;
  std::vector<Send> sends;
  for (std::size_t i = 1; i < routed.request.args.size(); ++i) {
    std::string_view pattern = routed.request.args[i];
    if (patterns_.emplace(pattern).second)
      for (std::size_t s = 0; s < shards; ++s) sends.push_back({s, command("PSUBSCRIBE", pattern)});
    confirmation(reply, client.state().protocol, "psubscribe", pattern, channels() + patterns());
  }
  send_all(client, std::move(reply), std::move(sends),
           [&](std::size_t shard) -> BackendConnection& { return connection(client, shard); });
}

void Subscriptions::punsubscribe(const Routed& routed) {
  auto& client = routed.client;
  std::size_t shards = client.worker().shard_map().shard_count();
  std::vector<std::string> targets;
  for (std::size_t i = 1; i < routed.request.args.size(); ++i)
    targets.emplace_back(routed.request.args[i]);
  if (routed.request.args.size() == 1) targets.assign(patterns_.begin(), patterns_.end());
  std::string reply;
  std::vector<Send> sends;
  for (const auto& pattern : targets) {
    if (patterns_.erase(pattern) > 0)
      for (std::size_t s = 0; s < shards; ++s)
        sends.push_back({s, command("PUNSUBSCRIBE", pattern)});
    confirmation(reply, client.state().protocol, "punsubscribe", pattern, channels() + patterns());
  }
  if (targets.empty())
    confirmation(reply, client.state().protocol, "punsubscribe", std::nullopt,
                 channels() + patterns());
  send_all(client, std::move(reply), std::move(sends),
           [&](std::size_t shard) -> BackendConnection& { return connection(client, shard); });
}

// The connection speaks the protocol the client had when it subscribed; a message's elements
// are bulk strings either way, so only its type byte tells a RESP2 array from a RESP3 push.
void Subscriptions::message(RequestContext& client, std::size_t, std::string_view frame) {
  char wanted = client.state().protocol == 3 ? '>' : '*';
  if (frame.front() == wanted) return client.pushes().push(frame);
  std::string converted(frame);
  converted.front() = wanted;
  client.pushes().push(converted);
}

void Subscriptions::abandon(RequestContext& client) {
  for (auto& [address, connection] : connections_) client.worker().pool().drop(connection);
  connections_.clear();
  channels_.clear();
  patterns_.clear();
  shard_channels_.clear();
}

}  // namespace santral::router
