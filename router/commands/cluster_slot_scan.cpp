// CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT through the cluster endpoint. The shards are plain
// Redis servers that keep no index by slot, so the keys are SCANned, shard after shard, over
// the client's own connections (in its database), and each key's slot computed here:
//
//   shard0: SCAN 0 COUNT 1000 -> cursor c1, keys ──► slot of each key == asked? count / keep
//           SCAN c1 ...        -> cursor 0        ──► next shard ... ──► the answer
//
// A full pass over every key, as costly as a SCAN of the whole keyspace; GETKEYSINSLOT stops
// once it has `count` keys. A scan runs under one shard map: if a reload or a move changes it
// on the way, the shards' numbering and the keys' places may have changed too, and the answer
// is TRYAGAIN.
#include <optional>

#include <boost/intrusive_ptr.hpp>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"
#include "router/commands/cluster_commands.h"
#include "router/commands/cluster_topology.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

constexpr std::string_view kScanCount = "1000";

class SlotScan final : public ReplySink {
 public:
  SlotScan(RequestContext& client, std::uint32_t slot, std::optional<std::uint64_t> max_keys)
      : session_(&client),
        reply_slot_(client.open_slot()),
        slot_(slot),
        max_keys_(max_keys),
        protocol_(client.state().protocol),
        topology_version_(client.worker().topology().version) {}

  void start() { ask(0, "0"); }

  void deliver(std::uint64_t /*slot*/, std::uint32_t shard, std::string_view reply) override {
    if (session_->worker().topology().version != topology_version_)
      return finish_error(
          error_message(ClientError::SlotScanMapChanged,
                        max_keys_ ? "CLUSTER GETKEYSINSLOT" : "CLUSTER COUNTKEYSINSLOT"));
    protocol::ReplyValue value;
    if (!protocol::parse_reply(reply, value) || value.is_error())
      return session_->deliver(reply_slot_, 0, reply);
    if (value.elements.size() != 2 || value.elements[1].type != protocol::ReplyValue::Type::Array)
      return finish_error(error_message(ClientError::MergeUnexpectedReply,
                                        session_->worker().shard_map().shard(shard).name, "SCAN"));
    for (const auto& key : value.elements[1].elements) {
      if (cluster_key_slot(key.text) != slot_) continue;
      ++count_;
      if (max_keys_) keys_.emplace_back(key.text);
      if (max_keys_ && count_ >= *max_keys_) return finish();
    }
    std::string_view cursor = value.elements[0].text;
    if (cursor != "0") return ask(shard, std::string(cursor));
    if (shard + 1 < session_->worker().shard_map().shard_count()) return ask(shard + 1, "0");
    finish();
  }

 private:
  void ask(std::size_t shard, const std::string& cursor) {
    if (max_keys_ && *max_keys_ == 0) return finish();
    std::string bytes;
    std::string_view args[] = {"SCAN", cursor, "COUNT", kScanCount};
    protocol::RespWriter(bytes).command(args);
    session_->shared_backend(shard).send(bytes, ReplySinkPtr(this), 0,
                                         static_cast<std::uint32_t>(shard));
  }

  void finish() {
    std::string out;
    protocol::RespWriter w(out, protocol_);
    if (!max_keys_) {
      w.integer(static_cast<std::int64_t>(count_));
    } else {
      w.array_header(keys_.size());
      for (const auto& key : keys_) w.bulk(key);
    }
    session_->deliver(reply_slot_, 0, out);
  }

  void finish_error(const std::string& message) {
    std::string out;
    protocol::RespWriter(out).error(message);
    session_->deliver(reply_slot_, 0, out);
  }

  boost::intrusive_ptr<RequestContext> session_;
  std::uint64_t reply_slot_;
  std::uint32_t slot_;
  std::optional<std::uint64_t> max_keys_;  // GETKEYSINSLOT's count; none: COUNTKEYSINSLOT
  int protocol_;
  std::uint64_t topology_version_;  // the map the scan started under
  std::uint64_t count_ = 0;
  std::vector<std::string> keys_;
};

void scan_slot(const Routed& r, std::uint32_t slot, std::optional<std::uint64_t> max_keys) {
  boost::intrusive_ptr<SlotScan> scan(new SlotScan(r.client, slot, max_keys));
  scan->start();
}

}  // namespace

void cluster_countkeysinslot(const Routed& r) {
  auto slot = protocol::parse_integer(r.request.args[2]);
  if (!slot) return r.client.reply_error(error_message(ClientError::NotAnInteger));
  if (*slot < 0 || *slot >= kClusterSlots)
    return r.client.reply_error(error_message(ClientError::ClusterInvalidSlot));
  scan_slot(r, static_cast<std::uint32_t>(*slot), std::nullopt);
}

void cluster_getkeysinslot(const Routed& r) {
  auto slot = protocol::parse_integer(r.request.args[2]);
  auto count = protocol::parse_integer(r.request.args[3]);
  if (!slot || !count) return r.client.reply_error(error_message(ClientError::NotAnInteger));
  if (*slot < 0 || *slot >= kClusterSlots || *count < 0)
    return r.client.reply_error(error_message(ClientError::ClusterInvalidCount));
  scan_slot(r, static_cast<std::uint32_t>(*slot), static_cast<std::uint64_t>(*count));
}

}  // namespace santral::router
