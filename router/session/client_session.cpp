#include "router/session/client_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/hotkeys/near_cache/near_cache.h"
#include "router/plan/dispatch.h"
#include "router/routes/subscriptions.h"
#include "router/routes/transaction.h"
#include "router/runtime/worker_services.h"
#include "router/tracking/redirected_invalidations.h"
#include "router/tracking/tracking_lanes.h"
#include "router/transport/handshake_log.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

namespace asio = boost::asio;
using protocol::ClientError;
using protocol::error_message;

namespace {

constexpr std::size_t kKeepCapacity = InputPool::kKeepBytes;  // larger ones are released

template <typename Buffer>
void release_if_large(Buffer& buffer) {
  if (buffer.capacity() > kKeepCapacity) Buffer().swap(buffer);
}

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  auto address = endpoint.address();
  if (address.is_v6()) return fmt::format("[{}]:{}", address.to_string(), endpoint.port());
  return fmt::format("{}:{}", address.to_string(), endpoint.port());
}

}  // namespace

ClientSession::ClientSession(WorkerServices& worker, asio::ip::tcp::socket socket, std::uint64_t id,
                             bool tls)
    : RequestContext(worker, state_), stream_(std::move(socket)), handshaking_(tls) {
  state_.id = id;
  state_.database = worker.config().backend.database;
  boost::system::error_code ec;
  auto remote = stream_.socket().remote_endpoint(ec);
  if (!ec) state_.peer = endpoint_text(remote);
  auto local = stream_.socket().local_endpoint(ec);
  if (!ec) state_.local = endpoint_text(local);
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
  state_.authenticated = worker.config().password.empty() && worker.config().users.empty();
}

// A session let go without close() (nothing held it any more: no read and no reply pending)
// must not stay in its worker's list.
ClientSession::~ClientSession() {
  if (closed_) return;
  worker_.input_changed(counted_input_, 0);
  worker_.forget(*this);
  give_back_input();
}

Transaction& ClientSession::transaction() {
  if (!transaction_) transaction_ = std::make_unique<Transaction>();
  return *transaction_;
}

bool ClientSession::transaction_ending() const {
  return transaction_ && transaction_->ended_in_flight();
}

bool ClientSession::in_transaction() const {
  return transaction_ && transaction_->in_multi();
}

// What only some clients ever need is made when first needed: an idle connection costs less.
PullOutcome& ClientSession::pull_outcome() {
  if (!pull_) pull_ = std::make_unique<PullOutcome>();
  return *pull_;
}

TrackedReads& ClientSession::tracked_reads() {
  if (!tracked_reads_) tracked_reads_ = std::make_unique<TrackedReads>();
  return *tracked_reads_;
}

Subscriptions& ClientSession::subscriptions() {
  if (!subscriptions_) subscriptions_ = std::make_unique<Subscriptions>();
  return *subscriptions_;
}

bool ClientSession::subscribed() const {
  return subscriptions_ && subscriptions_->count() > 0;
}

void ClientSession::start() {
  if (!handshaking_) return read();
  auto contexts = tls_in_force();
  if (!contexts || !contexts->clients) return close();
  stream_.start_tls(contexts->clients);
  stream_.async_handshake(asio::ssl::stream_base::server,
                          [self = boost::intrusive_ptr<ClientSession>(this)](
                              const boost::system::error_code& ec) { self->on_handshake(ec); });
}

void ClientSession::on_handshake(const boost::system::error_code& ec) {
  if (closed_) return;
  if (ec) {
    handshake_failed(state_.peer, handshake_failure(stream_.tls_stream()->native_handle(), ec));
    return close();
  }
  handshaking_ = false;
  state_.last_active = std::chrono::steady_clock::now();
  read();
}

SessionInput& ClientSession::input() {
  if (!input_) input_ = worker_.inputs().take(worker_.config().limits.request);
  return *input_;
}

void ClientSession::give_back_input() {
  if (input_) worker_.inputs().give_back(std::move(input_));
}

void ClientSession::close() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  boost::system::error_code ignored;
  stream_.socket().close(ignored);
  auto& pool = worker_.pool();
  if (transaction_) transaction_->abandon(*this);
  if (subscriptions_) subscriptions_->abandon(*this);
  // A blocked connection is still inside its command on the shard: close it, never reuse it.
  for (auto& call : blocked_.take_all()) pool.drop(call.connection);
  coherence_.clear();
  worker_.input_changed(std::exchange(counted_input_, 0), 0);
  worker_.forget(*this);
  // A read in flight may still be filling the buffer (io_uring), and a request being routed
  // (CLIENT KILL of itself) still reads its plan: then the buffer goes with the session.
  if (!reading_ && !processing_) give_back_input();
}

void ClientSession::make_room() {
  auto& in = input();
  if (in.end < in.inbox.size()) return;
  if (in.start > 0) {
    // The parser counts from the request's first byte, so the partial request may move.
    std::copy(in.inbox.begin() + static_cast<std::ptrdiff_t>(in.start),
              in.inbox.begin() + static_cast<std::ptrdiff_t>(in.end), in.inbox.begin());
    in.end -= in.start;
    in.start = 0;
  } else {
    in.inbox.resize(in.inbox.size() * 2);
  }
}

void ClientSession::drain() {
  draining_input_ = true;
  boost::system::error_code ignored;
  // A read in progress is cancelled; its bytes were not read yet, so nothing is lost.
  stream_.socket().cancel(ignored);
  process_input();
  if (done_draining()) close();
}

bool ClientSession::done_draining() const {
  return draining_input_ && replies_.empty() && outbox_.empty() && !write_in_flight_ &&
         !processing_;
}

// Two ways to read. A connection that owes replies (or has a partial request) keeps its buffer
// and reads into it. One that owes nothing gives the buffer back and waits for readability
// without one (with epoll that costs an epoll_ctl at each wake-up, with io_uring nothing).
void ClientSession::read() {
  if (!may_read()) return;
  if (parkable()) return wait_readable();
  read_into_buffer();
}

bool ClientSession::may_read() const {
  return !reading_ && !paused_ && !draining_ && !closing_ && !draining_input_ && !starved_ &&
         !handshaking_;
}

void ClientSession::read_into_buffer() {
  make_room();
  reading_ = true;
  auto& in = *input_;
  stream_.async_read_some(
      asio::buffer(in.inbox.data() + in.end, in.inbox.size() - in.end),
      [self = boost::intrusive_ptr<ClientSession>(this)](
          const boost::system::error_code& ec, std::size_t bytes) { self->on_read(ec, bytes); });
}

// Nothing to parse and nothing owed: the next bytes may be a long way off. Not with TLS: its
// state may hold bytes already taken off the socket, which a wait for readability would miss.
bool ClientSession::parkable() const {
  return (!input_ || input_->empty()) && replies_.empty() && !processing_ && !stream_.tls();
}

void ClientSession::wait_readable() {
  give_back_input();
  reading_ = true;
  stream_.socket().async_wait(asio::socket_base::wait_read,
                              [self = boost::intrusive_ptr<ClientSession>(this)](
                                  const boost::system::error_code& ec) { self->on_readable(ec); });
}

void ClientSession::on_readable(const boost::system::error_code& ec) {
  reading_ = false;
  bool parking = std::exchange(parking_, false);
  if (closed_) return;
  if (ec == boost::asio::error::operation_aborted && (draining_input_ || parking)) {
    if (parking) read();
    return;
  }
  if (ec) {
    close();
    return;
  }
  // Readable: the read finds its bytes at once (after a false alarm it waits with the buffer).
  if (may_read()) read_into_buffer();
}

void ClientSession::park_if_idle() {
  bool quiet = !std::exchange(read_since_sweep_, false);
  if (!quiet || !reading_ || !input_ || !parkable() || write_in_flight_ || closed_) return;
  // Only the read is in flight (no write: checked above); its bytes are not read yet.
  parking_ = true;
  boost::system::error_code ignored;
  stream_.socket().cancel(ignored);
}

void ClientSession::on_read(const boost::system::error_code& ec, std::size_t bytes) {
  reading_ = false;
  bool parking = std::exchange(parking_, false);
  if (closed_) return;
  if (ec == boost::asio::error::operation_aborted && (draining_input_ || parking)) {
    if (parking) read();
    return;
  }
  if (ec) {
    close();
    return;
  }
  read_since_sweep_ = true;
  input_->end += bytes;
  worker_.stats().client_bytes_in += bytes;
  process_input();
  if (over_query_buffer()) return;
  read();
}

// Keeps the worker's sum of buffered input (limits.max_input_bytes_total) up to date.
void ClientSession::input_counted() {
  if (closed_) return;  // close() took this session's part out (a request that closed it)
  std::size_t now = buffered_input();
  if (now == counted_input_) return;
  worker_.input_changed(std::exchange(counted_input_, now), now);
}

// Redis's client-query-buffer-limit: a request that never ends (a bulk announced and never
// sent in full) may not hold more than limits.max_query_buffer_bytes.
bool ClientSession::over_query_buffer() {
  auto limit = worker_.config().limits.max_query_buffer_bytes;
  if (buffered_input() <= limit || closing_) return false;
  spdlog::warn(
      "client {} ({}): {} bytes of an unfinished request, over "
      "limits.max_query_buffer_bytes; closing it",
      state_.id, state_.peer, buffered_input());
  silent_ = false;
  reply_error(error_message(ClientError::QueryBufferLimit, buffered_input(), limit));
  close_after_replies();
  return true;
}

void ClientSession::resume_reading() {
  if (!std::exchange(starved_, false)) return;
  read();
}

bool ClientSession::idle_since(std::chrono::steady_clock::time_point since) const {
  return state_.last_active < since && replies_.empty() && blocked_.empty() && !subscribed() &&
         !handshaking_ && !closed_;
}

void ClientSession::auth_timed_out() {
  if (state_.authenticated || closed_ || closing_) return;
  spdlog::debug("client {} ({}): not authenticated within limits.auth_timeout_ms; closing it",
                state_.id, state_.peer);
  reply_error(
      error_message(ClientError::AuthTimeout, worker_.config().limits.auth_timeout.count()));
  close_after_replies();
}

bool ClientSession::over_limits() const {
  const auto& limits = worker_.config().limits;
  return replies_.size() >= limits.max_pending_requests ||
         outbox_.size() + writing_.size() >= limits.max_output_bytes;
}

// Parses and routes every complete request in the inbox, in order.
void ClientSession::process_input() {
  if (processing_ || !input_) return;
  processing_ = true;
  auto& in = *input_;
  while (in.start < in.end && !closing_) {
    if (over_limits()) {
      paused_ = true;
      break;
    }
    protocol::Request request;
    std::size_t consumed = 0;
    std::string_view bytes(in.inbox.data() + in.start, in.end - in.start);
    auto status = in.parser.parse(bytes, request, consumed);
    if (status == protocol::ParseStatus::NeedMore) break;
    if (status == protocol::ParseStatus::Error) {
      reply_protocol_error();
      break;
    }
    if (status == protocol::ParseStatus::Complete) {
      current_ = {};
      silent_ = state_.reply_off || state_.skip_next;
      bool skipping = state_.skip_next;
      state_.skip_next = false;
      state_.last_active = std::chrono::steady_clock::now();
      if (dispatch(*this, request) == Dispatched::AfterEarlierReplies) {
        // Leave the request in the inbox; it is parsed again once every earlier reply is in,
        // and a CLIENT REPLY SKIP still applies to it then.
        state_.skip_next = skipping;
        draining_ = true;
        break;
      }
      ++requests_dispatched_;
    }
    in.start += consumed;
  }
  if (in.empty()) {
    in.start = in.end = 0;
    if (in.inbox.size() > kKeepCapacity) {
      in.inbox.resize(InputPool::kInboxBytes);
      in.inbox.shrink_to_fit();
    }
  }
  silent_ = false;
  processing_ = false;
  input_counted();
}

void ClientSession::reply_protocol_error() {
  using protocol::ProtocolError;
  const auto& parser = input().parser;
  const auto& limits = parser.limits();
  std::string message;
  switch (parser.error()) {
    case ProtocolError::InvalidMultibulkLength:
      message = error_message(ClientError::InvalidMultibulkLength);
      break;
    case ProtocolError::TooManyArguments:
      message = error_message(ClientError::TooManyArguments, parser.announced(), limits.max_args);
      break;
    case ProtocolError::InvalidBulkLength:
      message = error_message(ClientError::InvalidBulkLength);
      break;
    case ProtocolError::BulkTooLarge:
      message = error_message(ClientError::BulkTooLarge, parser.announced(), limits.max_bulk_bytes);
      break;
    case ProtocolError::ExpectedDollar: {
      // Redis prints a space in place of a CR or LF here.
      char got = parser.unexpected_byte();
      message = error_message(ClientError::ExpectedDollar, got == '\r' || got == '\n' ? ' ' : got);
      break;
    }
    case ProtocolError::TooBigCountString:
      message = error_message(ClientError::TooBigCountString);
      break;
    case ProtocolError::TooBigBulkCountString:
      message = error_message(ClientError::TooBigBulkCountString);
      break;
    case ProtocolError::TooBigInline:
      message = error_message(ClientError::TooBigInline, limits.max_inline_bytes);
      break;
    case ProtocolError::UnbalancedQuotes:
    case ProtocolError::None:
      message = error_message(ClientError::UnbalancedQuotes);
      break;
  }
  spdlog::debug("client {} ({}): {}; closing the connection", state_.id, state_.peer, message);
  silent_ = false;
  reply_error(message);
  close_after_replies();
}

void ClientSession::begin(const protocol::CommandSpec& command,
                          std::span<const std::string_view> args,
                          std::optional<config::ReadFrom> read_from,
                          std::optional<config::WriteConcern> write_concern) {
  // The request was read a moment ago: its parse time is its start (one clock read fewer).
  current_ = {&command, state_.last_active, &worker_.stats().called(command), std::nullopt};
  read_from_ = read_from;
  write_concern_ = write_concern;
  // A tracking client's requests take a RESP3 lane (shared_backend): a RESP2 client gets its
  // replies as Redis would have sent them to it.
  if (state_.protocol == 2 && state_.tracking.on) {
    current_.resp2 = protocol::resp2_shape(command, args);
    downgrades_replies_ = true;
  }
}

void ClientSession::finished(const ReplyQueue::Request& request, bool error) {
  if (request.stats == nullptr) return;
  WorkerStats::answered(*request.stats, std::chrono::steady_clock::now() - request.start, error);
}

void ClientSession::reply(std::string_view resp) {
  if (silent_) return;
  if (replies_.empty()) {
    outbox_.append(resp);
    finished(current_, protocol::is_error_frame(resp));
    if (answers_writes()) forget_answered_writes(true);
  } else {
    auto slot = replies_.open(1, nullptr, current_);
    coherence_.opened(slot, false, answers_writes());
    replies_.complete(slot, resp);
  }
  schedule_flush();
}

void ClientSession::reply_error(std::string_view message) {
  std::string line;
  protocol::RespWriter(line).error(message);
  reply(line);
}

std::uint64_t ClientSession::open_hidden_slot(std::uint32_t fragments,
                                              std::unique_ptr<ReplyMerge> merge) {
  auto slot = replies_.open(fragments, std::move(merge), {});
  replies_.silence(slot);
  return slot;
}

void ClientSession::map_changed(const config::Topology& topology) {
  if (transaction_) transaction_->map_changed(*this);
  auto untold = blocked_.end_moved(topology, worker_.pool(), worker_.io());
  if (!untold.empty()) end_calls(untold, error_message(ClientError::MoveChangedUnderneath));
}

bool ClientSession::call_ended_by_move(const BackendConnection* connection) const {
  return blocked_.ended_by_move(connection);
}

std::uint64_t ClientSession::open_slot(std::uint32_t fragments, std::unique_ptr<ReplyMerge> merge) {
  auto slot = replies_.open(fragments, std::move(merge), current_);
  last_slot_ = slot;
  ++opened_slots_;
  if (silent_) replies_.silence(slot);
  bool write = current_.command != nullptr && !current_.command->has(protocol::kReadonly);
  coherence_.opened(slot, write, answers_writes());
  return slot;
}

// Whether the current request's reply tells the client its writes are done: a write's, but
// inside MULTI only EXEC's (or DISCARD's), not QUEUED.
bool ClientSession::answers_writes() const {
  if (!coherence_.pending() || current_.command == nullptr ||
      current_.command->has(protocol::kReadonly))
    return false;
  return !in_transaction() || current_.command->stateful == protocol::StatefulKind::Transaction;
}

// Evicts again the keys of writes whose replies have left the queue (and with `now`, those of
// the write answered this moment), and spoils their fills in flight.
void ClientSession::forget_answered_writes(bool now) {
  coherence_.forget_answered(replies_.head_id(), now, worker_.near_cache());
}

// A tracking client's commands for a shard all take its lane there, reads from the primary,
// so that the lane's invalidations are in order with its replies (router/tracking/).
BackendConnection& ClientSession::shared_backend(std::size_t shard) {
  if (state_.tracking.on) return worker_.lanes().lane(shard, state_.database, state_.id);
  return worker_.pool().shared(shard, profile(), state_.id);
}

BackendConnection& ClientSession::backend(std::size_t shard) {
  if (current_.command != nullptr && current_.command->has(protocol::kReadonly) &&
      !state_.tracking.on)
    return worker_.pool().for_read(shard, profile(), state_.id,
                                   read_from_.value_or(worker_.config().read_from));
  return shared_backend(shard);
}

void ClientSession::forward(std::size_t shard, std::string_view request_bytes) {
  auto slot = open_slot();
  send_current(backend(shard), request_bytes, this, slot, 0);
}

void ClientSession::send_current(BackendConnection& connection, std::string_view request_bytes,
                                 ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment) {
  // A script may run long, as on Redis: it has timeouts.script_ms (router/routes/scripts.h).
  if (current_.command != nullptr && protocol::runs_script(*current_.command))
    return connection.send_within(request_bytes, std::move(sink), slot, fragment,
                                  worker_.config().timeouts.script);
  connection.send(request_bytes, std::move(sink), slot, fragment, true,
                  write_concern_ ? &*write_concern_ : nullptr);
}

void ClientSession::close_after_replies() {
  closing_ = true;
  schedule_flush();
}

void ClientSession::invalidate(std::string_view push_frame) {
  if (closed_) return;
  const auto& tracking = state_.tracking;
  if (tracking.redirect != 0)
    return worker_.redirect_invalidation(state_.id, tracking.redirect, tracking.redirect_worker,
                                         redirected_keys(push_frame, state_.protocol));
  if (state_.protocol == 3) push(push_frame);
}

void ClientSession::redirected_invalidation(std::string_view keys) {
  if (closed_) return;
  auto frame = router::redirected_invalidation(keys, state_.protocol, subscribed());
  if (!frame.empty()) push(frame);
}

// As Redis does, each invalidation that finds the target gone tells a RESP3 client again.
void ClientSession::redirect_gone(std::uint64_t target) {
  auto& tracking = state_.tracking;
  if (closed_ || !tracking.on || tracking.redirect != target) return;
  tracking.redirect_broken = true;
  if (state_.protocol == 3) push(redirect_broken_push(target));
}

void ClientSession::push(std::string_view frame) {
  if (replies_.empty()) {
    outbox_.append(frame);
  } else {
    replies_.complete(replies_.open(), frame);  // a slot with no command: not counted
  }
  // A subscriber that does not read its messages would otherwise grow Santral's memory
  // without bound (Redis's client-output-buffer-limit for pubsub does the same).
  if (outbox_.size() + writing_.size() > worker_.config().limits.max_output_bytes) {
    spdlog::warn(
        "client {} ({}): more than limits.max_output_bytes of pub/sub messages unread; "
        "closing it",
        state_.id, state_.peer);
    return close();
  }
  schedule_flush();
}

void ClientSession::deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) {
  if (closed_) return;
  if (slot == BackendConnection::kPushSlot) {
    if (subscriptions_) subscriptions_->message(*this, fragment, reply);
    return;
  }
  std::string resp2;
  if (downgrades_replies_) {
    const auto* request = replies_.request(slot);
    if (request != nullptr && request->resp2 && protocol::to_resp2(reply, *request->resp2, resp2))
      reply = resp2;
  }
  // Registered as its reply is read off the lane: before any later push on that lane.
  if (tracked_reads_ && !tracked_reads_->empty())
    tracked_reads_->arrived(slot, fragment, [this](const std::string& key, std::uint64_t epoch) {
      worker_.lanes().read_arrived(state_.id, key, epoch);
    });
  auto left = [this](const ReplyQueue::Request& request, bool error) { finished(request, error); };
  if (replies_.is_simple_head(slot)) {
    outbox_.append(reply);
    finished(replies_.head_request(), protocol::is_error_frame(reply));
    replies_.pop_head();
    replies_.drain(outbox_, left);
  } else if (replies_.fill(slot, fragment, reply)) {
    replies_.drain(outbox_, left);
  }
  // Before this client can send its next request: it must not read what it just overwrote.
  forget_answered_writes();
  // With nothing else outstanding no other reply can join this write, so it need not wait for
  // the end of the loop turn.
  if (replies_.empty() && !processing_) {
    flush();
  } else {
    schedule_flush();
  }
  resume_if_drained();
}

void ClientSession::connection_lost(std::size_t shard) {
  // Its subscriptions on that shard are gone; closing makes the client reconnect and
  // subscribe again, as it would if it had been talking to that Redis itself.
  const auto& map = worker_.shard_map();
  spdlog::info("client {} ({}): its pub/sub connection to shard '{}' was lost; closing it",
               state_.id, state_.peer, shard < map.shard_count() ? map.shard(shard).name : "?");
  close();
}

void ClientSession::unblocked(const BackendConnection* connection) {
  blocked_.answered(connection, worker_.pool());
}

bool ClientSession::unblock(bool with_error, ClientError error) {
  if (blocked_.empty()) return false;
  end_calls(blocked_.take_all(), with_error ? error_message(error) : std::string());
  return true;
}

// `error` empty: each call answers as if it timed out.
void ClientSession::end_calls(const std::vector<BlockedCalls::Call>& calls,
                              const std::string& error) {
  std::string unblocked;
  if (!error.empty()) protocol::RespWriter(unblocked).error(error);
  // Answer every fragment first (WAIT has one per shard): closing a connection fails what is
  // in flight on it, and that error must not be the answer.
  for (auto& call : calls)
    deliver(call.slot, call.fragment, error.empty() ? call.timeout_reply : unblocked);
  for (auto& call : calls) worker_.pool().drop(call.connection);
}

void ClientSession::resume_if_drained() {
  if (draining_ && replies_.empty()) {
    draining_ = false;
    process_input();
    read();
  }
  if (!paused_ || over_limits()) return;
  paused_ = false;
  process_input();
  read();
}

void ClientSession::schedule_flush() {
  if (flush_posted_ || write_in_flight_ || closed_) return;
  flush_posted_ = true;
  asio::post(stream_.socket().get_executor(), [self = boost::intrusive_ptr<ClientSession>(this)] {
    self->flush_posted_ = false;
    self->flush();
  });
}

void ClientSession::flush() {
  if (write_in_flight_ || closed_) return;
  if (outbox_.empty()) {
    if ((closing_ && replies_.empty()) || done_draining()) close();
    return;
  }
  worker_.stats().client_bytes_out += outbox_.size();
  writing_.swap(outbox_);
  write_in_flight_ = true;
  stream_.async_write(asio::buffer(writing_), [self = boost::intrusive_ptr<ClientSession>(this)](
                                                  const boost::system::error_code& ec,
                                                  std::size_t) { self->on_written(ec); });
}

void ClientSession::on_written(const boost::system::error_code& ec) {
  write_in_flight_ = false;
  writing_.clear();
  release_if_large(writing_);
  if (closed_) return;
  if (ec) {
    close();
    return;
  }
  flush();
  resume_if_drained();
}

std::string ClientSession::describe() {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  auto now = std::chrono::steady_clock::now();
  int channels = subscriptions_ ? subscriptions_->channels() : 0;
  int patterns = subscriptions_ ? subscriptions_->patterns() : 0;
  int shard_channels = subscriptions_ ? subscriptions_->shard_channels() : 0;
  std::string flags;
  if (transaction_ && transaction_->in_multi()) flags += 'x';
  if (!blocked_.empty()) flags += 'b';
  if (channels + patterns + shard_channels > 0) flags += 'P';
  if (flags.empty()) flags.push_back('N');
  std::size_t query_bytes = input_ ? input_->end - input_->start : 0;
  std::size_t query_capacity = input_ ? input_->inbox.capacity() : 0;
  std::size_t query_free = input_ ? input_->inbox.size() - query_bytes : 0;
  return fmt::format(
      "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} "
      "ssub={} multi={} qbuf={} qbuf-free={} obl=0 oll={} omem={} tot-mem={} events=r cmd={} "
      "user={} redir=-1 resp={}",
      state_.id, state_.peer, state_.local, stream_.socket().native_handle(), state_.name,
      duration_cast<seconds>(now - state_.connected_at).count(),
      duration_cast<seconds>(now - state_.last_active).count(), flags, state_.database, channels,
      patterns, shard_channels, transaction_ ? transaction_->queued() : -1, query_bytes, query_free,
      replies_.size(), outbox_.size() + writing_.size(),
      query_capacity + outbox_.capacity() + writing_.capacity(), state_.last_command, state_.user,
      state_.protocol);
}

}  // namespace santral::router
