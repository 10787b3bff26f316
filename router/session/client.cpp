#include "router/session/client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/hotkeys/near_cache/near_cache.h"
#include "router/routes/subscriptions.h"
#include "router/routes/transaction.h"
#include "router/runtime/scripts_in_flight.h"
#include "router/runtime/tenant_limiter.h"
#include "router/runtime/worker_services.h"
#include "router/tracking/redirected_invalidations.h"
#include "router/tracking/tracking_lanes.h"

namespace santral::router {

namespace asio = boost::asio;
using protocol::ClientError;
using protocol::error_message;

namespace {

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  auto address = endpoint.address();
  if (address.is_v6()) return fmt::format("[{}]:{}", address.to_string(), endpoint.port());
  return fmt::format("{}:{}", address.to_string(), endpoint.port());
}

ClientState new_client(const WorkerServices& worker, const asio::ip::tcp::socket& socket,
                       std::uint64_t id) {
  ClientState state;
  state.id = id;
  state.database = worker.config().backend.database;
  boost::system::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  if (!ec) state.peer = endpoint_text(remote);
  auto local = socket.local_endpoint(ec);
  if (!ec) state.local = endpoint_text(local);
  state.authenticated = worker.config().password.empty() && worker.config().users.empty();
  return state;
}

}  // namespace

Client::Client(WorkerServices& worker, asio::ip::tcp::socket socket, std::uint64_t id, bool tls)
    : RequestContext(worker, state_, *this, *this, *this, *this),
      state_(new_client(worker, socket, id)),
      session_(*this, std::move(socket), tls) {}

// A client let go without close() (nothing held it any more: no read and no reply pending)
// must not stay in its worker's list.
Client::~Client() {
  if (session_.closed()) return;
  leave_user_limits();
  worker_.forget(*this);
}

void Client::close() {
  if (!session_.shut()) return;
  if (transaction_) transaction_->abandon(*this);
  if (subscriptions_) subscriptions_->abandon(*this);
  // A blocked connection is still inside its command on the shard: close it, never reuse it.
  for (auto& call : blocked_.take_all()) worker_.pool().drop(call.connection);
  coherence_.clear();
  leave_user_limits();
  worker_.forget(*this);
}

void Client::leave_user_limits() {
  if (auto* limiter = std::exchange(state_.limiter, nullptr)) limiter->remove_connection();
}

// The limits of the user it logged in as. A request past one is answered with an error that
// names it, and not run; under wait_ms one whose token is due within wait_ms is held until
// then, and after a refusal the connection is not read for wait_ms, twice that after a second
// refusal in a row, and so on up to a second (or wait_ms if longer): a client that retries at
// once costs about one refusal a second, not one per request it can send, while one that backs
// off by itself never notices. A request handled again (after waiting for earlier replies, or
// held) had its token already.
Client::Admission Client::admit_by_user_limits(const ActiveRequest& active) {
  auto* limiter = state_.limiter;
  if (limiter == nullptr || active.waiting_since) return Admission::Run;
  if (!limiter->admits_pipeline(session_.replies_owed())) {
    reply_error(
        error_message(ClientError::UserPipelineLimit, state_.user, limiter->limits().max_pipeline));
    return Admission::Refused;
  }
  auto wait = limiter->reserve_request(state_.last_active);
  if (!wait) {
    auto limits = limiter->limits();
    reply_error(error_message(ClientError::UserRateLimited, state_.user, limits.requests_per_s,
                              limits.burst));
    if (limits.wait_ms > 0)
      session_.hold(pause_after_refusal(limits.wait_ms, refusals_in_a_row_++));
    return Admission::Refused;
  }
  refusals_in_a_row_ = 0;
  if (wait->count() == 0) return Admission::Run;
  session_.hold(*wait);
  return Admission::Held;
}

Dispatched Client::handle(ActiveRequest& active) {
  current_ = {};
  silent_ = state_.reply_off || state_.skip_next;
  bool skipping = std::exchange(state_.skip_next, false);
  state_.last_active = std::chrono::steady_clock::now();
  request_read_ = active.waiting_since.value_or(state_.last_active);
  switch (admit_by_user_limits(active)) {
    case Admission::Run:
      break;
    case Admission::Held:
      // Resumed when its token is due; its time counts from when it was first read.
      silent_ = false;
      state_.skip_next = skipping;
      active.waiting_since = request_read_;
      return Dispatched::Held;
    case Admission::Refused:
      silent_ = false;
      ++state_.requests_dispatched;
      return Dispatched::Done;
  }
  auto dispatched = dispatch(*this, active);
  silent_ = false;
  if (dispatched == Dispatched::AfterEarlierReplies) {
    // Resumed once every earlier reply is in: a CLIENT REPLY SKIP still applies to it, and
    // its time counts from the first reading.
    state_.skip_next = skipping;
    active.waiting_since = request_read_;
  } else {
    ++state_.requests_dispatched;
  }
  return dispatched;
}

void Client::refuse(std::string_view message) {
  silent_ = false;
  reply_error(message);
  close_after_replies();
}

bool Client::idle_since(std::chrono::steady_clock::time_point since) const {
  return state_.last_active < since && session_.owes_nothing() && blocked_.empty() &&
         !subscribed() && !session_.handshaking() && !session_.closed();
}

void Client::auth_timed_out() {
  if (state_.authenticated || session_.closed() || session_.closing()) return;
  spdlog::debug("client {} ({}): not authenticated within limits.auth_timeout_ms; closing it",
                state_.id, state_.peer);
  refuse(error_message(ClientError::AuthTimeout, worker_.config().limits.auth_timeout.count()));
}

Transaction& Client::transaction() {
  if (!transaction_) transaction_ = std::make_unique<Transaction>();
  return *transaction_;
}

bool Client::transaction_ending() const {
  return transaction_ && transaction_->ended_in_flight();
}

bool Client::in_transaction() const {
  return transaction_ && transaction_->in_multi();
}

// What only some clients ever need is made when first needed: an idle connection costs less.
PullOutcome& Client::pull_outcome() {
  if (!pull_) pull_ = std::make_unique<PullOutcome>();
  return *pull_;
}

TrackedReads& Client::tracked_reads() {
  if (!tracked_reads_) tracked_reads_ = std::make_unique<TrackedReads>();
  return *tracked_reads_;
}

Subscriptions& Client::subscriptions() {
  if (!subscriptions_) subscriptions_ = std::make_unique<Subscriptions>();
  return *subscriptions_;
}

bool Client::subscribed() const {
  return subscriptions_ && subscriptions_->count() > 0;
}

void Client::begin(const protocol::CommandSpec& command, std::span<const std::string_view> args,
                   const Plan& plan) {
  // The request was read a moment ago: its parse time is its start (one clock read fewer).
  current_ = {&command, request_read_, &worker_.stats().called(command), std::nullopt, {}};
  if (worker_.config().slowlog.enabled()) {
    slow_args(args, current_.trace.args);
    current_.trace.queued = state_.last_active - request_read_;
    current_.trace.queued_behind_pull =
        pull_ && pull_->done && pull_->request == state_.requests_dispatched;
  }
  connection_ = plan.connection;
  read_from_ = plan.read_from;
  write_concern_ = plan.write_concern;
  // A tracking client's requests take a RESP3 lane (shared_backend): a RESP2 client gets its
  // replies as Redis would have sent them to it.
  if (state_.protocol == 2 && state_.tracking.on) {
    current_.resp2 = protocol::resp2_shape(command, args);
    session_.downgrade_replies();
  }
}

void Client::reply(std::string_view resp) {
  if (silent_) return;
  auto slot = session_.answer(resp, current_);
  if (slot) {
    coherence_.opened(*slot, false, answers_writes());
  } else if (answers_writes()) {
    forget_answered_writes(true);
  }
}

void Client::reply_error(std::string_view message) {
  std::string line;
  protocol::RespWriter(line).error(message);
  reply(line);
}

std::uint64_t Client::open_hidden_slot(std::uint32_t fragments, std::unique_ptr<ReplyMerge> merge) {
  return session_.open(fragments, std::move(merge), {}, true);
}

std::uint64_t Client::open_slot(std::uint32_t fragments, std::unique_ptr<ReplyMerge> merge) {
  auto slot = session_.open(fragments, std::move(merge), current_, silent_);
  slot_opened(slot);
  bool write = current_.command != nullptr && !current_.command->has(protocol::kReadonly);
  coherence_.opened(slot, write, answers_writes());
  return slot;
}

// Whether the current request's reply tells the client its writes are done: a write's, but
// inside MULTI only EXEC's (or DISCARD's), not QUEUED.
bool Client::answers_writes() const {
  if (!coherence_.pending() || current_.command == nullptr ||
      current_.command->has(protocol::kReadonly))
    return false;
  return !in_transaction() || current_.command->stateful == protocol::StatefulKind::Transaction;
}

// Evicts again the keys of writes whose replies have left the queue (and with `now`, those of
// the write answered this moment), and spoils their fills in flight.
void Client::forget_answered_writes(bool now) {
  coherence_.forget_answered(session_.next_reply(), now, worker_.near_cache());
}

void Client::map_changed(const placement::Topology& topology) {
  if (transaction_) transaction_->map_changed(*this);
  auto untold = blocked_.end_moved(topology, worker_.pool(), worker_.io());
  if (!untold.empty()) end_calls(untold, error_message(ClientError::MoveChangedUnderneath));
}

bool Client::call_ended_by_move(const BackendConnection* connection) const {
  return blocked_.ended_by_move(connection);
}

// A tracking client's commands for a shard all take its lane there, reads from the primary,
// so that the lane's invalidations are in order with its replies (router/tracking/).
BackendConnection& Client::shared_backend(std::size_t shard) {
  if (state_.tracking.on) return worker_.lanes().lane(shard, state_.database, state_.id);
  return worker_.pool().shared(shard, profile(), state_.id);
}

BackendConnection& Client::backend(std::size_t shard) {
  switch (connection_) {
    case ConnectionKind::ReadFrom:
      return worker_.pool().for_read(shard, profile(), state_.id,
                                     read_from_.value_or(worker_.config().read_from));
    case ConnectionKind::TrackingLane:
      return worker_.lanes().lane(shard, state_.database, state_.id);
    case ConnectionKind::Primary:
      break;
  }
  return worker_.pool().shared(shard, profile(), state_.id);
}

void Client::forward(std::size_t shard, std::string_view request_bytes) {
  auto slot = open_slot();
  send_current(backend(shard), request_bytes, this, slot, 0);
}

void Client::send_current(BackendConnection& connection, std::string_view request_bytes,
                          ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment) {
  // A script may run long, as on Redis: it has timeouts.script_ms (router/routes/scripts.h).
  if (current_.command != nullptr && protocol::runs_script(*current_.command)) {
    ReplySinkPtr counted(
        new ScriptReply(std::move(sink), scripts_in_flight(), connection.target().shard_name));
    return connection.send_within(request_bytes, std::move(counted), slot, fragment,
                                  worker_.config().timeouts.script);
  }
  connection.send(request_bytes, std::move(sink), slot, fragment, true,
                  write_concern_ ? &*write_concern_ : nullptr);
}

void Client::invalidate(std::string_view push_frame) {
  if (closed()) return;
  const auto& tracking = state_.tracking;
  if (tracking.redirect != 0) {
    // A client gone is gone for good (ids are not reused): the tracking client is told here, in
    // order with its own replies (a PING after a write waits for its lanes: dispatch), not
    // after a round trip through the target's worker.
    if (tracking.redirect_broken || !worker_.shared().clients.worker_of(tracking.redirect))
      return redirect_gone(tracking.redirect);
    return worker_.redirect_invalidation(state_.id, tracking.redirect, tracking.redirect_worker,
                                         redirected_keys(push_frame, state_.protocol));
  }
  if (state_.protocol == 3) push(push_frame);
}

void Client::redirected_invalidation(std::string_view keys) {
  if (closed()) return;
  auto frame = router::redirected_invalidation(keys, state_.protocol, subscribed());
  if (!frame.empty()) push(frame);
}

// As Redis does, each invalidation that finds the target gone tells a RESP3 client again.
void Client::redirect_gone(std::uint64_t target) {
  auto& tracking = state_.tracking;
  if (closed() || !tracking.on || tracking.redirect != target) return;
  tracking.redirect_broken = true;
  if (state_.protocol == 3) push(redirect_broken_push(target));
}

void Client::push(std::string_view frame) {
  if (session_.push(frame)) return;
  spdlog::warn(
      "client {} ({}): more than limits.max_output_bytes of pub/sub messages unread; "
      "closing it",
      state_.id, state_.peer);
  close();
}

void Client::deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) {
  if (closed()) return;
  if (slot == BackendConnection::kPushSlot) {
    if (subscriptions_) subscriptions_->message(*this, fragment, reply);
    return;
  }
  // Registered as its reply is read off the lane: before any later push on that lane.
  if (tracked_reads_ && !tracked_reads_->empty())
    tracked_reads_->arrived(
        slot, fragment,
        [this](const std::string& key, std::uint64_t epoch) {
          worker_.lanes().read_arrived(state_.id, key, epoch);
        },
        [this](std::vector<std::string> keys) {
          worker_.lanes().own_write_answered(state_.id, state_.database, std::move(keys));
        });
  session_.fill(slot, fragment, reply);
  // Before this client can send its next request: it must not read what it just overwrote.
  forget_answered_writes();
  session_.send_replies();
}

void Client::timed(std::uint64_t slot, std::uint32_t /*fragment*/, const ShardTiming& timing) {
  if (!worker_.config().slowlog.enabled()) return;
  if (auto* request = session_.slot_request(slot)) request->trace.shards.push_back(timing);
}

void Client::connection_lost(std::size_t shard) {
  // Its subscriptions on that shard are gone; closing makes the client reconnect and
  // subscribe again, as it would if it had been talking to that Redis itself.
  const auto& map = worker_.shard_map();
  spdlog::info("client {} ({}): its pub/sub connection to shard '{}' was lost; closing it",
               state_.id, state_.peer, shard < map.shard_count() ? map.shard(shard).name : "?");
  close();
}

void Client::unblocked(const BackendConnection* connection) {
  blocked_.answered(connection, worker_.pool());
}

bool Client::unblock(bool with_error, ClientError error) {
  if (blocked_.empty()) return false;
  end_calls(blocked_.take_all(), with_error ? error_message(error) : std::string());
  return true;
}

// `error` empty: each call answers as if it timed out.
void Client::end_calls(const std::vector<BlockedCalls::Call>& calls, const std::string& error) {
  std::string unblocked;
  if (!error.empty()) protocol::RespWriter(unblocked).error(error);
  // Answer every fragment first (WAIT has one per shard): closing a connection fails what is
  // in flight on it, and that error must not be the answer.
  for (auto& call : calls)
    deliver(call.slot, call.fragment, error.empty() ? call.timeout_reply : unblocked);
  for (auto& call : calls) worker_.pool().drop(call.connection);
}

std::string Client::describe() {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  auto now = std::chrono::steady_clock::now();
  int channels = subscriptions_ ? subscriptions_->channels() : 0;
  int patterns = subscriptions_ ? subscriptions_->patterns() : 0;
  int shard_channels = subscriptions_ ? subscriptions_->shard_channels() : 0;
  const auto& tracking = state_.tracking;
  // Redis's letters, in its order (the ones a client of Santral can have).
  std::string flags;
  if (state_.monitoring) flags += 'O';
  if (channels + patterns + shard_channels > 0) flags += 'P';
  if (in_transaction()) flags += 'x';
  if (!blocked_.empty()) flags += 'b';
  if (tracking.on) flags += 't';
  if (tracking.on && tracking.redirect_broken) flags += 'R';
  if (tracking.on && tracking.mode == TrackingSettings::Mode::Broadcast) flags += 'B';
  if (flags.empty()) flags.push_back('N');
  auto buffers = session_.buffers();
  // argv-mem and multi-mem are 0: a request stays in the query buffer until it is whole, and
  // a transaction's commands are queued on its shard, not here. rbp (the read buffer's peak) is
  // its size: Santral gives an idle connection's buffer back rather than shrink it.
  auto read_buffer = buffers.query + buffers.query_free;
  auto redirect = tracking.on ? static_cast<std::int64_t>(tracking.redirect) : -1;
  return fmt::format(
      "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} "
      "ssub={} multi={} qbuf={} qbuf-free={} argv-mem=0 multi-mem=0 rbs={} rbp={} obl=0 oll={} "
      "omem={} tot-mem={} events=r cmd={} user={} redir={} resp={}",
      state_.id, state_.peer, state_.local, buffers.fd, state_.name,
      duration_cast<seconds>(now - state_.connected_at).count(),
      duration_cast<seconds>(now - state_.last_active).count(), flags, state_.database, channels,
      patterns, shard_channels, transaction_ ? transaction_->queued() : -1, buffers.query,
      buffers.query_free, read_buffer, read_buffer, buffers.replies, buffers.output, buffers.memory,
      state_.last_command, state_.user, redirect, state_.protocol);
}

}  // namespace santral::router
