#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "config/read_from.h"
#include "config/write_concern.h"
#include "protocol/request_parser.h"
#include "router/hotkeys/near_cache/write_coherence.h"
#include "router/plan/dispatch.h"
#include "router/routes/blocked_calls.h"
#include "router/routes/key_pull.h"
#include "router/runtime/client_state.h"
#include "router/runtime/request_context.h"
#include "router/session/client_session.h"
#include "router/tracking/tracked_reads.h"
#include "router/tracking/tracking_client.h"

namespace santral::router {

// One client as its requests see it: what it holds across requests (its state, transaction,
// subscriptions, blocked calls, pulls, tracked reads, near-cache coherence) and the request
// being handled now. It is the RequestContext the routes and commands are given
// (router/runtime/request_context.h) and each of that context's client roles
// (router/runtime/client_roles.h), and the ReplySink the shards answer; its ClientSession
// does the I/O, the reply order and the limits. Lives on one worker thread, reference-counted:
// it goes when nothing (a read, a write, a shard owing a reply, a worker list) holds it.
class Client final : public RequestContext,
                     public HeldAcrossRequests,
                     public ClientCaching,
                     public PushChannel,
                     public ClientLink,
                     public TrackingClient {
 public:
  Client(WorkerServices& worker, boost::asio::ip::tcp::socket socket, std::uint64_t id, bool tls);
  ~Client() override;

  ClientSession& session() { return session_; }

  // A request the session parsed (or one that waited, resuming), dispatched through the
  // command table.
  Dispatched handle(ActiveRequest& active);
  // Answers the request being read with `message` and closes the connection after it (a
  // protocol error, a request over limits.max_query_buffer_bytes).
  void refuse(std::string_view message);
  // limits.idle_timeout_s: idle since `since` and neither subscribed nor blocked.
  bool idle_since(std::chrono::steady_clock::time_point since) const;
  // limits.auth_timeout_ms ran out before AUTH: told, then closed.
  void auth_timed_out();
  // A move started, ended or turned back (`topology` is now in force): a transaction holding
  // a shard's connection routed the old way is ended with a retryable answer, and so are
  // blocked calls on keys it moves (router/routes/blocked_calls.h).
  void map_changed(const placement::Topology& topology);

  // ReplySink: a backend's reply to one of this client's requests, or a pub/sub message.
  void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) override;
  void connection_lost(std::size_t shard) override;
  void timed(std::uint64_t slot, std::uint32_t fragment, const ShardTiming& timing) override;
  // TrackingClient: client-side caching (router/tracking/).
  const TrackingSettings& tracking_settings() const override { return state_.tracking; }

  // RequestContext (router/runtime/request_context.h says what each does).
  void begin(const protocol::CommandSpec& command, std::span<const std::string_view> args,
             const Plan& plan) override;
  ActiveRequest& active() override { return session_.input().active; }
  void reply(std::string_view resp) override;
  void reply_error(std::string_view message) override;
  void set_silent(bool silent) override { silent_ = silent; }
  std::uint64_t open_slot(std::uint32_t fragments = 1,
                          std::unique_ptr<ReplyMerge> merge = nullptr) override;
  std::uint64_t open_hidden_slot(std::uint32_t fragments,
                                 std::unique_ptr<ReplyMerge> merge) override;
  void forward(std::size_t shard, std::string_view request_bytes) override;
  void send_current(BackendConnection& connection, std::string_view request_bytes,
                    ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment) override;
  BackendConnection& backend(std::size_t shard) override;
  BackendConnection& shared_backend(std::size_t shard) override;
  void close_after_replies() override { session_.close_after_replies(); }
  PullOutcome& pull_outcome() override;

  // The client roles (router/runtime/client_roles.h).
  // HeldAcrossRequests:
  Transaction& transaction() override;
  bool in_transaction() const override;
  bool transaction_ending() const override;
  Subscriptions& subscriptions() override;
  bool subscribed() const override;
  void blocked(BlockedCall call) override { blocked_.add(std::move(call)); }
  void unblocked(const BackendConnection* connection) override;
  bool call_ended_by_move(const BackendConnection* connection) const override;
  bool unblock(bool with_error,
               protocol::ClientError error = protocol::ClientError::Unblocked) override;
  // ClientCaching:
  TrackedReads& tracked_reads() override;
  WriteCoherence& coherence() override { return coherence_; }
  bool writes_answered() const override {
    return coherence_.writes_answered(session_.owes_nothing(), session_.next_reply());
  }
  // PushChannel (invalidate is TrackingClient's too):
  void push(std::string_view frame) override;
  void invalidate(std::string_view push_frame) override;
  void redirected_invalidation(std::string_view keys) override;
  void redirect_gone(std::uint64_t target) override;
  // ClientLink:
  bool idle() const override { return session_.owes_nothing(); }
  std::string describe() override;
  void close() override;
  bool closed() const override { return session_.closed(); }

 private:
  bool answers_writes() const;
  // What the limits of the user it logged in as make of the request being handled.
  enum class Admission { Run, Held, Refused };
  Admission admit_by_user_limits(const ActiveRequest& active);
  void leave_user_limits();
  void forget_answered_writes(bool now = false);
  void end_calls(const std::vector<BlockedCalls::Call>& calls, const std::string& error);

  ClientState state_;
  SlotRequest current_;  // the command being handled, for its slot and statistics
  bool silent_ = false;  // the current request's reply is dropped (CLIENT REPLY OFF/SKIP)
  ConnectionKind connection_ = ConnectionKind::Primary;  // the current request's (its plan's)
  std::optional<config::ReadFrom> read_from_;            // its key's namespace's, if it says
  std::optional<config::WriteConcern> write_concern_;    // likewise
  // When the request being handled was read; one that waited (a pull) keeps the first time
  // (ActiveRequest::waiting_since).
  std::chrono::steady_clock::time_point request_read_;
  // Requests refused in a row by the user's rate under wait_ms: each doubles how long the
  // connection is not read after it (admit_by_user_limits).
  unsigned refusals_in_a_row_ = 0;

  WriteCoherence coherence_;
  std::unique_ptr<Transaction> transaction_;
  std::unique_ptr<Subscriptions> subscriptions_;
  BlockedCalls blocked_;
  std::unique_ptr<PullOutcome> pull_;  // made at the first move that pulls this client's keys
  std::unique_ptr<TrackedReads> tracked_reads_;  // made at the first tracked read

  // Last: it goes first, while everything its socket's handlers may reach is still here.
  ClientSession session_;
};

}  // namespace santral::router
