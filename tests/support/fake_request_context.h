#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "router/backend/backend_connection.h"
#include "router/hotkeys/near_cache/write_coherence.h"
#include "router/routes/blocked_calls.h"
#include "router/routes/key_pull.h"
#include "router/routes/subscriptions.h"
#include "router/routes/transaction.h"
#include "router/runtime/plan.h"
#include "router/runtime/request_context.h"
#include "router/tracking/tracked_reads.h"
#include "router/tracking/tracking_client.h"
#include "tests/support/fake_worker_services.h"

namespace santral::test {

// A client for unit tests of routes and commands: it records what a route does with it
// instead of writing to a socket. Replies land in `replies`; a slot opened with a merge is
// completed by feeding its fragments through deliver(), and answer(slot) is then what the
// client would read. forward() and send_current() are recorded, not sent. backend(shard) is a
// real BackendConnection per shard that is never started: what a route sends on it queues,
// and only its counters (requests_to, bytes_to) show it arrived. It is the TrackingClient its
// worker's tracking lanes tell, as a ClientSession is: what they tell it lands in
// `invalidations`. It is its own client roles (router/runtime/client_roles.h), as Client is.
class FakeRequestContext final : public router::RequestContext,
                                 public router::HeldAcrossRequests,
                                 public router::ClientCaching,
                                 public router::PushChannel,
                                 public router::ClientLink,
                                 public router::TrackingClient {
 public:
  struct Slot {
    std::uint32_t fragments = 1;
    std::uint32_t delivered = 0;
    std::unique_ptr<router::ReplyMerge> merge;
    bool hidden = false;
    std::optional<std::string> answer;  // once every fragment is in
  };
  struct Forwarded {
    std::size_t shard;
    std::string bytes;
    std::uint64_t slot;
  };
  struct SentCurrent {
    std::size_t shard;  // the connection's
    std::string bytes;
    std::uint64_t slot;
    std::uint32_t fragment;
    router::ReplySinkPtr sink;  // where the shard's reply would go: a test may deliver to it
  };

  explicit FakeRequestContext(FakeWorkerServices& worker, std::uint64_t id = 1);
  ~FakeRequestContext() override;

  // --- what the route did ---
  std::vector<std::string> replies;  // reply() and reply_error(), as RESP, in order
  std::vector<Forwarded> forwarded;
  std::vector<SentCurrent> sent_current;
  std::vector<std::string> pushed;
  std::vector<std::string> stray;  // replies for a slot that was not waiting for one
  std::vector<std::string> invalidations;
  bool closing = false;  // close_after_replies()
  bool silent = false;
  const protocol::CommandSpec* begun = nullptr;  // begin()'s command
  // begin()'s plan's connection kind, and the kind of each backend() call since.
  router::ConnectionKind begun_connection = router::ConnectionKind::Primary;
  std::vector<router::ConnectionKind> backend_kinds;
  // shared_backend() hands out the worker's pool's shared connections, as a client's does,
  // instead of the fake's own: for tests that run FakeWorkerServices::connections_io().
  bool pooled = false;
  // The bytes of its active request while it is dispatched (tests/support/planned_request.h).
  std::shared_ptr<const void> kept_request;

  const std::map<std::uint64_t, Slot>& slots() const { return slots_; }
  // The client's reply in `slot`, once all its fragments were delivered.
  std::optional<std::string> answer(std::uint64_t slot) const;
  // The connection backend(shard) returns, and what was sent on it.
  router::BackendConnection& connection(std::size_t shard);
  std::uint64_t requests_to(std::size_t shard) const;
  std::uint64_t bytes_to(std::size_t shard) const;
  // Before anything is sent to `shard`: its requests fail at once with its down error,
  // delivered to the sink.
  void mark_down(std::size_t shard, const std::string& reason);

  // --- RequestContext ---
  void begin(const protocol::CommandSpec& command, std::span<const std::string_view> args,
             const router::Plan& plan) override;
  router::ActiveRequest& active() override { return active_; }
  void reply(std::string_view resp) override;
  void reply_error(std::string_view message) override;
  void set_silent(bool on) override { silent = on; }
  std::uint64_t open_slot(std::uint32_t fragments,
                          std::unique_ptr<router::ReplyMerge> merge) override;
  std::uint64_t open_hidden_slot(std::uint32_t fragments,
                                 std::unique_ptr<router::ReplyMerge> merge) override;
  void forward(std::size_t shard, std::string_view request_bytes) override;
  void send_current(router::BackendConnection& connection, std::string_view request_bytes,
                    router::ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment) override;
  router::BackendConnection& backend(std::size_t shard) override {
    backend_kinds.push_back(begun_connection);
    return connection(shard);
  }
  router::BackendConnection& shared_backend(std::size_t shard) override {
    if (pooled) return fake_worker_.pool().shared(shard, profile(), state_.id);
    return connection(shard);
  }
  void close_after_replies() override { closing = true; }

  router::PullOutcome& pull_outcome() override { return pull_; }

  // --- HeldAcrossRequests ---
  router::Transaction& transaction() override { return transaction_; }
  bool in_transaction() const override { return transaction_.in_multi(); }
  bool transaction_ending() const override { return transaction_.ended_in_flight(); }
  router::Subscriptions& subscriptions() override { return subscriptions_; }
  bool subscribed() const override { return subscriptions_.count() > 0; }
  // Blocking calls are kept as ClientSession keeps them (router/routes/blocked_calls.h).
  void blocked(router::BlockedCall call) override { blocked_.add(std::move(call)); }
  void unblocked(const router::BackendConnection* connection) override;
  bool call_ended_by_move(const router::BackendConnection* connection) const override {
    return blocked_.ended_by_move(connection);
  }
  bool unblock(bool with_error, protocol::ClientError error) override;
  bool blocking() const { return !blocked_.empty(); }

  // --- ClientCaching ---
  router::TrackedReads& tracked_reads() override { return tracked_reads_; }
  router::WriteCoherence& coherence() override { return coherence_; }
  bool writes_answered() const override { return true; }

  // --- PushChannel (invalidate is TrackingClient's too) ---
  void push(std::string_view frame) override { pushed.emplace_back(frame); }
  void invalidate(std::string_view push_frame) override { invalidations.emplace_back(push_frame); }
  const router::TrackingSettings& tracking_settings() const override { return state_.tracking; }
  void redirected_invalidation(std::string_view keys) override { invalidations.emplace_back(keys); }
  void redirect_gone(std::uint64_t) override {}

  // --- ClientLink ---
  bool idle() const override;

  std::string describe() override;
  void close() override { closed_ = true; }
  bool closed() const override { return closed_; }

  // --- ReplySink ---
  void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) override;

 private:
  FakeWorkerServices& fake_worker_;
  router::ClientState state_;
  router::ActiveRequest active_;
  std::map<std::uint64_t, Slot> slots_;
  std::uint64_t next_slot_ = 1;
  router::PullOutcome pull_;
  router::Transaction transaction_;
  router::Subscriptions subscriptions_;
  router::BlockedCalls blocked_;
  router::TrackedReads tracked_reads_;
  router::WriteCoherence coherence_;
  std::map<std::size_t, router::BackendConnectionPtr> connections_;
  std::map<std::size_t, std::unique_ptr<router::ShardStats>> shard_stats_;
  bool closed_ = false;
  bool ending_ = false;  // being destroyed: what the connections fail now is dropped
};

}  // namespace santral::test
