// Blocking commands (BLPOP, BLMOVE, BZPOPMIN, XREAD ... BLOCK, WAIT, ...) each run on a
// connection lent to the client for the call, so a blocked client never stalls the shared
// pipelined connections. The connection goes back to the pool with the reply; if the client
// leaves while blocked, the connection is closed, which ends the command on the shard.
#include <algorithm>
#include <charconv>
#include <limits>

#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/merge/reply_merge.h"
#include "router/routes/blocked_calls.h"
#include "router/routes/routing.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

class BlockingReply final : public ReplySink {
 public:
  BlockingReply(boost::intrusive_ptr<RequestContext> client, std::uint64_t slot,
                const BackendConnection* connection)
      : session_(std::move(client)), slot_(slot), connection_(connection) {}

  void deliver(std::uint64_t, std::uint32_t fragment, std::string_view reply) override {
    // Ended by a switch of topology before the shard served it: it did not run, retry it.
    if (reply.starts_with("-UNBLOCKED") && session_->held().call_ended_by_move(connection_)) {
      std::string retry;
      protocol::RespWriter(retry).error(
          protocol::error_message(protocol::ClientError::MoveChangedUnderneath));
      session_->deliver(slot_, fragment, retry);
    } else {
      session_->deliver(slot_, fragment, reply);
    }
    session_->held().unblocked(connection_);
  }

 private:
  boost::intrusive_ptr<RequestContext> session_;
  std::uint64_t slot_;
  const BackendConnection* connection_;
};

// WAIT on every shard: the fewest replicas any shard confirmed.
class MinimumMerge final : public ReplyMerge {
 public:
  void add(std::uint32_t, std::string_view reply) override {
    if (!error_.empty()) return;
    long long value = 0;
    auto digits = reply.substr(1, reply.size() >= 3 ? reply.size() - 3 : 0);
    if (reply.front() != ':' ||
        std::from_chars(digits.data(), digits.data() + digits.size(), value).ec != std::errc{}) {
      if (protocol::is_error_frame(reply))
        error_ = std::string(reply);
      else
        protocol::RespWriter(error_).error(
            protocol::error_message(protocol::ClientError::WaitUnexpectedReply));
      return;
    }
    minimum_ = std::min(minimum_, value);
  }
  void finish(std::string& out) override {
    if (!error_.empty()) {
      out = error_;
      return;
    }
    protocol::RespWriter(out).integer(minimum_);
  }

 private:
  long long minimum_ = std::numeric_limits<long long>::max();
  std::string error_;
};

// What a timed-out call answers, for CLIENT UNBLOCK ... TIMEOUT: the command table says.
std::string timeout_reply(const Routed& routed) {
  using protocol::TimeoutReply;
  if (routed.spec.timeout == TimeoutReply::Zero) return ":0\r\n";
  if (routed.client.state().protocol == 3) return "_\r\n";
  return routed.spec.timeout == TimeoutReply::NilBulk ? "$-1\r\n" : "*-1\r\n";
}

void lend_and_send(const Routed& routed, std::size_t shard, std::uint64_t slot,
                   std::uint32_t fragment, std::string_view prelude, std::string timeout) {
  auto& client = routed.client;
  auto connection = client.worker().pool().lend(shard, client.profile());
  std::vector<std::string> keys;
  for (const auto& key : routed.plan.keys) keys.emplace_back(routed.request.args[key.position]);
  client.held().blocked({connection, slot, fragment, std::move(timeout), std::move(keys)});
  if (!prelude.empty()) connection->send_silent(prelude);
  boost::intrusive_ptr<ReplySink> sink(
      new BlockingReply(boost::intrusive_ptr<RequestContext>(&client), slot, connection.get()));
  connection->send(request_bytes(routed), std::move(sink), slot, fragment, /*timed=*/false);
}

// WAIT numreplicas timeout. Redis counts the replicas that have the connection's last write;
// any command sets that mark to the shard's current offset, so a PING first makes WAIT cover
// everything the shard had done, this client's earlier writes included (dispatch holds WAIT
// back until they are answered).
void route_wait(const Routed& routed) {
  auto& client = routed.client;
  auto shards = static_cast<std::uint32_t>(client.worker().shard_map().shard_count());
  auto slot = client.open_slot(shards, std::make_unique<MinimumMerge>());
  for (std::uint32_t s = 0; s < shards; ++s)
    lend_and_send(routed, s, slot, s, "*1\r\n$4\r\nPING\r\n", timeout_reply(routed));
}

}  // namespace

void route_blocking(const Routed& routed) {
  if (routed.spec.verb == protocol::StatefulVerb::Wait) return route_wait(routed);
  if (routed.plan.has_error()) return routed.client.reply_error(routed.plan.error);
  auto slot = routed.client.open_slot();
  lend_and_send(routed, *routed.plan.shard, slot, 0, {}, timeout_reply(routed));
}

}  // namespace santral::router
