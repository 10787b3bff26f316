#include "router/session/client_session.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "router/metrics/stats.h"
#include "router/runtime/worker_services.h"
#include "router/session/client.h"
#include "router/session/protocol_error_message.h"
#include "router/transport/handshake_log.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

namespace asio = boost::asio;
using protocol::ClientError;
using protocol::error_message;

namespace {

template <typename Buffer>
void release_if_large(Buffer& buffer) {
  if (buffer.capacity() > InputPool::kKeepBytes) Buffer().swap(buffer);
}

}  // namespace

// A reply left the queue: its command's statistics count it, and SLOWLOG keeps it when it
// took slowlog.threshold_us or more.
void ClientSession::answered(const SlotRequest& request, bool error) {
  if (request.stats == nullptr) return;
  auto took = std::chrono::steady_clock::now() - request.start;
  WorkerStats::answered(*request.stats, took, error);
  auto& worker = client_.worker();
  const auto& slowlog = worker.config().slowlog;
  if (!slowlog.enabled() || took < std::chrono::microseconds(slowlog.threshold_us)) return;
  const auto& map = worker.shard_map();
  SlowEntry entry;
  entry.id = worker.shared().client_id_base +
             worker.shared().next_slow_id.fetch_add(1, std::memory_order_relaxed);
  entry.unix_time = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  entry.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
  entry.args.assign(request.trace.args.begin(), request.trace.args.end());
  entry.measure = slow_measure(request.trace, [&map](std::size_t shard) {
    return shard < map.shard_count() ? map.shard(shard).name : "shard " + std::to_string(shard);
  });
  entry.client_addr = client_.state().peer;
  entry.client_name = client_.state().name;
  worker.slow_log().add(std::move(entry), slowlog.max_len);
}

ClientSession::ClientSession(Client& client, asio::ip::tcp::socket socket, bool tls)
    : client_(client), stream_(std::move(socket)), handshaking_(tls) {
  boost::system::error_code ignored;
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
}

// A session let go without shut() (nothing held its client any more: no read and no reply
// pending) takes its part out of its worker's buffered input.
ClientSession::~ClientSession() {
  if (closed_) return;
  client_.worker().input_changed(counted_input_, 0);
  give_back_input();
  if (!plain()) return;
  ReadinessLoop::of(client_.worker().io()).forget(watch_);
  ::close(fd_);
}

void ClientSession::start() {
  if (!handshaking_) return watch_socket();
  auto contexts = tls_in_force();
  if (!contexts || !contexts->clients) return client_.close();
  stream_.start_tls(contexts->clients);
  stream_.async_handshake(asio::ssl::stream_base::server,
                          [this, keep = ReplySinkPtr(&client_)](
                              const boost::system::error_code& ec) { on_handshake(ec); });
}

// A plain socket leaves Asio's reactor for the worker's readiness loop; its first edge comes at
// once when the client wrote before it was watched.
void ClientSession::watch_socket() {
  boost::system::error_code ec;
  fd_ = stream_.socket().release(ec);
  if (ec) {
    fd_ = -1;
    return client_.close();
  }
  auto hold = std::make_shared<ReplySinkPtr>(&client_);
  if (!ReadinessLoop::of(client_.worker().io()).watch(fd_, *this, std::move(hold), watch_, ec)) {
    spdlog::warn("client {} ({}): cannot watch its socket ({}); closing it", client_.state().id,
                 client_.state().peer, ec.message());
    return client_.close();
  }
}

void ClientSession::on_ready(std::uint32_t events) {
  ReplySinkPtr keep(&client_);
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    readable_ = true;
    read();
  }
  if (write_in_flight_ && !closed_ && (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0)
    send_ready();
}

void ClientSession::on_handshake(const boost::system::error_code& ec) {
  if (closed_) return;
  auto& state = client_.state();
  if (ec) {
    handshake_failed(state.peer, handshake_failure(stream_.tls_stream()->native_handle(), ec));
    return client_.close();
  }
  handshaking_ = false;
  state.last_active = std::chrono::steady_clock::now();
  read();
}

SessionInput& ClientSession::input() {
  if (!input_) input_ = client_.worker().inputs().take(client_.worker().config().limits.request);
  return *input_;
}

void ClientSession::give_back_input() {
  if (input_) client_.worker().inputs().give_back(std::move(input_));
}

bool ClientSession::shut() {
  if (closed_) return false;
  closed_ = true;
  closing_ = true;
  if (plain()) {
    ReadinessLoop::of(client_.worker().io()).forget(watch_);
    ::close(std::exchange(fd_, -1));
  } else {
    boost::system::error_code ignored;
    stream_.socket().close(ignored);
  }
  if (hold_timer_) hold_timer_->cancel();
  client_.worker().input_changed(std::exchange(counted_input_, 0), 0);
  // A request being routed (CLIENT KILL of itself) still reads its plan, and a TLS read in
  // flight may still be filling the buffer: then the buffer goes with the session.
  if (!reading_ && !processing_) give_back_input();
  return true;
}

void ClientSession::stop_after_input() {
  draining_input_ = true;
  // A TLS read in progress is cancelled; its bytes were not read yet, so nothing is lost.
  boost::system::error_code ignored;
  if (!plain()) stream_.socket().cancel(ignored);
  process_input();
  if (done_draining()) client_.close();
}

bool ClientSession::done_draining() const {
  return draining_input_ && replies_.empty() && outbox_.empty() && !write_in_flight_ &&
         !processing_ && !held_;
}

// A plain connection reads when its readiness loop said bytes arrived; a TLS one keeps a read
// in flight on Asio.
void ClientSession::read() {
  if (!may_read()) return;
  if (plain()) return read_ready();
  read_into_buffer();
}

bool ClientSession::may_read() const {
  return !reading_ && !paused_ && !waiting_ && !held_ && !closing_ && !draining_input_ &&
         !starved_ && !handshaking_;
}

// One read while the socket has bytes: a short read took them all, and only the next edge
// brings more. A full one leaves some behind, read on the next turn so other clients go first.
void ClientSession::read_ready() {
  if (!readable_) return park_if_parkable();
  auto& in = input();
  in.make_room();
  auto room = in.inbox.size() - in.end;
  auto bytes = ::recv(fd_, in.inbox.data() + in.end, room, MSG_DONTWAIT);
  if (bytes < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      readable_ = false;
      return;
    }
    if (errno == EINTR) return read_ready();
    return client_.close();
  }
  if (bytes == 0) return client_.close();  // the client closed its end
  readable_ = static_cast<std::size_t>(bytes) == room;
  received(static_cast<std::size_t>(bytes));
  if (over_query_buffer()) return;
  if (!readable_) return park_if_parkable();
  asio::post(client_.worker().io(), [this, keep = ReplySinkPtr(&client_)] {
    if (!closed_) read();
  });
}

void ClientSession::read_into_buffer() {
  auto& in = input();
  in.make_room();
  reading_ = true;
  stream_.async_read_some(
      asio::buffer(in.inbox.data() + in.end, in.inbox.size() - in.end),
      [this, keep = ReplySinkPtr(&client_)](const boost::system::error_code& ec,
                                            std::size_t bytes) { on_read(ec, bytes); });
}

// Nothing to parse and nothing owed: the next bytes may be a long way off. Not with TLS: its
// state may hold bytes already taken off the socket, and its read stays in flight with the
// buffer.
bool ClientSession::parkable() const {
  return (!input_ || input_->empty()) && replies_.empty() && !processing_ && plain();
}

// Drained, with nothing to parse and nothing owed: the buffer goes back to the worker at once
// (a connection answered by Santral itself, PING or AUTH, holds none while it waits).
void ClientSession::park_if_parkable() {
  if (parkable() && !closed_) give_back_input();
}

// What a connection waiting for its replies kept: once it read nothing for a sweep.
void ClientSession::park_if_idle() {
  if (!std::exchange(read_since_sweep_, false)) park_if_parkable();
}

void ClientSession::on_read(const boost::system::error_code& ec, std::size_t bytes) {
  reading_ = false;
  if (closed_) return;
  if (ec == boost::asio::error::operation_aborted && draining_input_) return;
  if (ec) return client_.close();
  received(bytes);
  if (over_query_buffer()) return;
  read();
}

void ClientSession::received(std::size_t bytes) {
  read_since_sweep_ = true;
  input_->end += bytes;
  client_.worker().stats().client_bytes_in += bytes;
  process_input();
}

// Keeps the worker's sum of buffered input (limits.max_input_bytes_total) up to date.
void ClientSession::input_counted() {
  if (closed_) return;  // shut() took this session's part out (a request that closed it)
  std::size_t now = buffered_input();
  if (now == counted_input_) return;
  client_.worker().input_changed(std::exchange(counted_input_, now), now);
}

// Redis's client-query-buffer-limit: a request that never ends (a bulk announced and never
// sent in full) may not hold more than limits.max_query_buffer_bytes.
bool ClientSession::over_query_buffer() {
  auto limit = client_.worker().config().limits.max_query_buffer_bytes;
  if (buffered_input() <= limit || closing_) return false;
  spdlog::warn(
      "client {} ({}): {} bytes of an unfinished request, over "
      "limits.max_query_buffer_bytes; closing it",
      client_.state().id, client_.state().peer, buffered_input());
  client_.refuse(error_message(ClientError::QueryBufferLimit, buffered_input(), limit));
  return true;
}

void ClientSession::hold(std::chrono::nanoseconds how_long) {
  if (!hold_timer_)
    hold_timer_ = std::make_unique<asio::steady_timer>(stream_.socket().get_executor());
  held_ = true;
  hold_timer_->expires_after(how_long);
  hold_timer_->async_wait([this, keep = ReplySinkPtr(&client_)](const boost::system::error_code&) {
    held_ = false;
    if (closed_) return;
    process_input();
    read();
    if (done_draining()) client_.close();
  });
}

void ClientSession::resume_reading() {
  if (!std::exchange(starved_, false)) return;
  read();
}

bool ClientSession::over_limits() const {
  const auto& limits = client_.worker().config().limits;
  return replies_.size() >= limits.max_pending_requests ||
         outbox_.size() + writing_.size() >= limits.max_output_bytes;
}

// Parses and hands on every complete request in the inbox, in order.
void ClientSession::process_input() {
  if (processing_ || !input_) return;
  processing_ = true;
  auto& in = *input_;
  while (in.start < in.end && !closing_ && !held_) {
    if (over_limits()) {
      paused_ = true;
      break;
    }
    auto& active = in.active;
    if (!active.parsed) {
      std::string_view bytes(in.inbox.data() + in.start, in.end - in.start);
      auto status = in.parser.parse(bytes, active.request, active.bytes);
      if (status == protocol::ParseStatus::NeedMore) break;
      if (status == protocol::ParseStatus::Error) {
        auto message = protocol_error_message(in.parser);
        spdlog::debug("client {} ({}): {}; closing the connection", client_.state().id,
                      client_.state().peer, message);
        client_.refuse(message);
        break;
      }
      active.parsed = status == protocol::ParseStatus::Complete;
      if (active.parsed) ++client_.worker().stats().requests_parsed;
    }
    if (active.parsed) {
      auto dispatched = client_.handle(active);
      // Either keeps the request as it stands (ActiveRequest): it resumes once every earlier
      // reply is in, or when the hold ends; meanwhile nothing more is read.
      if (dispatched == Dispatched::AfterEarlierReplies) waiting_ = true;
      if (dispatched != Dispatched::Done) break;
      active.done();
    }
    in.start += active.bytes;
  }
  if (in.empty()) in.rewind();
  processing_ = false;
  input_counted();
}

std::uint64_t ClientSession::open(std::uint32_t fragments, std::unique_ptr<ReplyMerge> merge,
                                  const SlotRequest& request, bool silent) {
  auto slot = replies_.open(fragments, std::move(merge), request);
  if (silent) replies_.silence(slot);
  return slot;
}

std::optional<std::uint64_t> ClientSession::answer(std::string_view resp,
                                                   const SlotRequest& request) {
  std::optional<std::uint64_t> slot;
  if (replies_.empty()) {
    outbox_.append(resp);
    answered(request, protocol::is_error_frame(resp));
  } else {
    slot = replies_.open(1, nullptr, request);
    replies_.complete(*slot, resp);
  }
  schedule_flush();
  return slot;
}

void ClientSession::fill(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) {
  std::string resp2;
  if (downgrades_replies_) {
    const auto* request = replies_.request(slot);
    if (request != nullptr && request->resp2 && protocol::to_resp2(reply, *request->resp2, resp2))
      reply = resp2;
  }
  if (replies_.is_simple_head(slot)) {
    outbox_.append(reply);
    answered(replies_.head_request(), protocol::is_error_frame(reply));
    replies_.pop_head();
    replies_.drain(outbox_,
                   [this](const SlotRequest& request, bool error) { answered(request, error); });
  } else if (replies_.fill(slot, fragment, reply)) {
    replies_.drain(outbox_,
                   [this](const SlotRequest& request, bool error) { answered(request, error); });
  }
}

void ClientSession::send_replies() {
  // With nothing else outstanding no other reply can join this write, so it need not wait for
  // the end of the loop turn.
  if (replies_.empty() && !processing_) {
    flush();
  } else {
    schedule_flush();
  }
  resume_if_drained();
}

bool ClientSession::push(std::string_view frame) {
  if (replies_.empty()) {
    outbox_.append(frame);
  } else {
    replies_.complete(replies_.open(), frame);  // a slot with no command: not counted
  }
  // A subscriber that does not read its messages would otherwise grow Santral's memory
  // without bound (Redis's client-output-buffer-limit for pubsub does the same).
  if (outbox_.size() + writing_.size() > client_.worker().config().limits.max_output_bytes)
    return false;
  schedule_flush();
  return true;
}

void ClientSession::close_after_replies() {
  closing_ = true;
  schedule_flush();
}

void ClientSession::resume_if_drained() {
  if (waiting_ && replies_.empty()) {
    waiting_ = false;
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
  asio::post(stream_.socket().get_executor(), [this, keep = ReplySinkPtr(&client_)] {
    flush_posted_ = false;
    flush();
  });
}

void ClientSession::flush() {
  if (write_in_flight_ || closed_) return;
  if (outbox_.empty()) {
    if ((closing_ && replies_.empty()) || done_draining()) client_.close();
    return;
  }
  client_.worker().stats().client_bytes_out += outbox_.size();
  writing_.swap(outbox_);
  write_in_flight_ = true;
  if (plain()) return send_ready();
  stream_.async_write(asio::buffer(writing_),
                      [this, keep = ReplySinkPtr(&client_)](const boost::system::error_code& ec,
                                                            std::size_t) { on_written(ec); });
}

// Plain: one send of what is left; a short one means the socket's buffer is full, and the
// readiness loop says when it has room again.
void ClientSession::send_ready() {
  auto left = writing_.size() - written_;
  auto sent = ::send(fd_, writing_.data() + written_, left, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;
    if (errno == EINTR) return send_ready();
    return on_written(boost::system::error_code(errno, boost::system::system_category()));
  }
  written_ += static_cast<std::size_t>(sent);
  if (written_ < writing_.size()) return;
  on_written({});
}

void ClientSession::on_written(const boost::system::error_code& ec) {
  write_in_flight_ = false;
  written_ = 0;
  writing_.clear();
  release_if_large(writing_);
  if (closed_) return;
  if (ec) return client_.close();
  flush();
  resume_if_drained();
}

ClientSession::Buffers ClientSession::buffers() {
  Buffers buffers;
  buffers.fd = plain() ? fd_ : stream_.socket().native_handle();
  buffers.query = buffered_input();
  buffers.query_free = input_ ? input_->inbox.size() - buffers.query : 0;
  buffers.replies = replies_.size();
  buffers.output = outbox_.size() + writing_.size();
  buffers.memory =
      (input_ ? input_->inbox.capacity() : 0) + outbox_.capacity() + writing_.capacity();
  return buffers;
}

}  // namespace santral::router
