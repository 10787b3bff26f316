#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "config/read_from.h"
#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"
#include "router/hotkeys/near_cache/write_coherence.h"
#include "router/routes/blocked_calls.h"
#include "router/routes/key_pull.h"
#include "router/runtime/client_state.h"
#include "router/runtime/plan.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"
#include "router/session/reply_queue.h"
#include "router/session/session_input.h"
#include "router/tracking/tracked_reads.h"
#include "router/tracking/tracking_client.h"
#include "router/transport/stream.h"

namespace santral::router {

class Transaction;
class Subscriptions;

// One client connection: reads its requests, routes each through the command table, and
// writes the replies back in request order. Lives on one worker thread.
class ClientSession final : public RequestContext, public TrackingClient {
 public:
  // `tls`: accepted on the TLS listener; the handshake comes first.
  ClientSession(WorkerServices& worker, boost::asio::ip::tcp::socket socket, std::uint64_t id,
                bool tls);
  ~ClientSession() override;

  void start();
  // A connection that has read nothing since the last call and owes no reply gives its input
  // buffer back to the worker and waits for readability without one (Worker's sweep).
  void park_if_idle();
  // Graceful shutdown: read nothing more, answer what was read, then close.
  void drain();
  // Closes the connection now; replies still owed by backends are dropped when they arrive,
  // and connections lent to this client (transaction, blocking, pub/sub) are closed.
  void close() override;
  bool closed() const override { return closed_; }
  // Still in its TLS handshake.
  bool handshaking() const { return handshaking_; }
  // limits.idle_timeout_s: idle since `idle_since` and neither subscribed nor blocked.
  bool idle_since(std::chrono::steady_clock::time_point since) const;
  // limits.auth_timeout_ms ran out before AUTH: told, then closed.
  void auth_timed_out();
  // Input read but not yet parsed into requests (the partial request a slow client holds).
  std::size_t buffered_input() const { return input_ ? input_->end - input_->start : 0; }
  // limits.max_input_bytes_total: no more reads until resume_reading(), to let others go first.
  void stop_reading() { starved_ = true; }
  void resume_reading();
  bool reading_stopped() const { return starved_; }

  // ReplySink: a backend's reply to one of this client's requests, or a pub/sub message.
  void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) override;
  void connection_lost(std::size_t shard) override;

  // A move started, ended or turned back (`topology` is now in force): a transaction holding
  // a shard's connection routed the old way is ended with a retryable answer, and so are
  // blocked calls on keys it moves (router/routes/blocked_calls.h).
  void map_changed(const config::Topology& topology);
  // TrackingClient: client-side caching (router/tracking/).
  const TrackingSettings& tracking_settings() const override { return state_.tracking; }

  // RequestContext (router/runtime/request_context.h says what each does).
  void begin(const protocol::CommandSpec& command, std::span<const std::string_view> args,
             std::optional<config::ReadFrom> read_from,
             std::optional<config::WriteConcern> write_concern) override;
  Plan& plan() override { return input().plan; }
  std::string& scratch() override { return input().scratch; }
  void reply(std::string_view resp) override;
  void reply_error(std::string_view message) override;
  void set_silent(bool silent) override { silent_ = silent; }
  std::uint64_t open_slot(std::uint32_t fragments = 1,
                          std::unique_ptr<ReplyMerge> merge = nullptr) override;
  std::uint64_t open_hidden_slot(std::uint32_t fragments,
                                 std::unique_ptr<ReplyMerge> merge) override;
  std::uint64_t last_slot() const override { return last_slot_; }
  std::uint64_t opened_slots() const override { return opened_slots_; }
  void forward(std::size_t shard, std::string_view request_bytes) override;
  void send_current(BackendConnection& connection, std::string_view request_bytes,
                    ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment) override;
  BackendConnection& backend(std::size_t shard) override;
  BackendConnection& shared_backend(std::size_t shard) override;
  void close_after_replies() override;
  PullOutcome& pull_outcome() override;
  std::uint64_t requests_dispatched() const override { return requests_dispatched_; }
  std::uint64_t routed_version() const override { return routed_version_; }
  void set_routed_version(std::uint64_t version) override { routed_version_ = version; }
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
  void push(std::string_view frame) override;
  void invalidate(std::string_view push_frame) override;
  void redirected_invalidation(std::string_view keys) override;
  void redirect_gone(std::uint64_t target) override;
  TrackedReads& tracked_reads() override;
  WriteCoherence& coherence() override { return coherence_; }
  bool writes_answered() const override {
    return coherence_.writes_answered(replies_.empty(), replies_.head_id());
  }
  bool idle() const override { return replies_.empty(); }
  std::string describe() override;

 private:
  SessionInput& input();
  void on_handshake(const boost::system::error_code& ec);
  void read();
  bool may_read() const;
  void read_into_buffer();
  void wait_readable();
  void on_readable(const boost::system::error_code& ec);
  void on_read(const boost::system::error_code& ec, std::size_t bytes);
  bool parkable() const;
  void give_back_input();
  void process_input();
  void reply_protocol_error();
  void input_counted();
  bool over_query_buffer();
  bool over_limits() const;
  void resume_if_drained();
  void schedule_flush();
  void flush();
  void on_written(const boost::system::error_code& ec);
  void make_room();
  void finished(const ReplyQueue::Request& request, bool error);
  bool done_draining() const;
  bool answers_writes() const;
  void forget_answered_writes(bool now = false);
  void end_calls(const std::vector<BlockedCalls::Call>& calls, const std::string& error);

  Stream stream_;  // TCP, or TLS for a client of the TLS listener
  ClientState state_;

  std::unique_ptr<SessionInput> input_;  // none while there is nothing to read or parse

  ReplyQueue replies_;
  std::string outbox_;
  std::string writing_;
  bool write_in_flight_ = false;
  bool flush_posted_ = false;
  bool silent_ = false;          // the current request's reply is dropped (CLIENT REPLY OFF/SKIP)
  ReplyQueue::Request current_;  // the command being handled, for its slot and statistics
  std::optional<config::ReadFrom> read_from_;          // the current key's namespace's, if it says
  std::optional<config::WriteConcern> write_concern_;  // likewise
  WriteCoherence coherence_;

  bool reading_ = false;  // a read (or a wait for readability) is in flight
  bool parking_ = false;  // the read in flight is cancelled to give the buffer back
  bool read_since_sweep_ = false;
  bool processing_ = false;
  bool paused_ = false;          // backpressure: too much in flight or buffered
  bool draining_ = false;        // a request waits for every earlier reply first (WAIT)
  bool closing_ = false;         // no more requests; close once every reply is written
  bool draining_input_ = false;  // shutting down: no more reads, but what was read is answered
  bool closed_ = false;
  // Some reply slot of this client may hold a RESP3 lane's reply for a RESP2 client
  // (SlotRequest::resp2); until then deliver() does not look.
  bool downgrades_replies_ = false;
  bool handshaking_ = false;       // TLS: the handshake is not done yet
  bool starved_ = false;           // limits.max_input_bytes_total: reads wait for the others
  std::size_t counted_input_ = 0;  // this session's part of its worker's buffered input

  std::unique_ptr<Transaction> transaction_;
  std::unique_ptr<Subscriptions> subscriptions_;
  BlockedCalls blocked_;
  std::unique_ptr<PullOutcome> pull_;  // made at the first move that pulls this client's keys
  std::uint64_t routed_version_ = 0;
  std::uint64_t requests_dispatched_ = 0;
  std::unique_ptr<TrackedReads> tracked_reads_;  // made at the first tracked read
  std::uint64_t last_slot_ = 0;
  std::uint64_t opened_slots_ = 0;
};

}  // namespace santral::router
