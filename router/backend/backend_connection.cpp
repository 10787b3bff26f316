#include "router/backend/backend_connection.h"

#include <algorithm>
#include <span>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/backend/connection_name.h"
#include "router/backend/draining_connections.h"
#include "router/backend/shard_login.h"
#include "router/backend/write_fence.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

namespace asio = boost::asio;
using asio::ip::tcp;
using protocol::ClientError;
using protocol::error_message;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kInboxInitial = 16 * 1024;
constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

std::string as_reply(std::string_view message) {
  std::string reply;
  protocol::RespWriter(reply).error(message);
  return reply;
}

}  // namespace

std::string_view BackendConnection::state_name(State state, bool ejected) {
  if (ejected) return "down";
  switch (state) {
    case State::Up:
      return "up";
    case State::Connecting:
      return "connecting";
    case State::Down:
    case State::Stopped:
      return "down";
  }
  return "down";
}

BackendConnection::BackendConnection(asio::io_context& io, BackendTarget target,
                                     std::shared_ptr<const config::Config> config,
                                     ShardStats& stats, ConnectionRole role)
    : io_(io),
      target_(std::move(target)),
      config_(std::move(config)),
      stats_(&stats),
      role_(role),
      stream_(Stream::Socket(io)),
      resolver_(io),
      retry_timer_(io),
      confirms_(config_->confirms_writes()),
      inbox_(kInboxInitial) {}

void BackendConnection::start() {
  connect();
}

void BackendConnection::stop() {
  state_ = State::Stopped;
  close_socket("the connection was closed");
  resolver_.cancel();
  retry_timer_.cancel();
  push_sink_.reset();
  auto reply = as_reply(error_message(ClientError::ShuttingDown));
  fail_all(reply);
  for (auto& waiting : failover_hold_.take()) {
    ++stats_->errors;
    waiting.sink->deliver(waiting.slot, waiting.fragment, reply);
  }
}

void BackendConnection::abandon(const std::string& why) {
  if (state_ == State::Stopped) return;
  close_socket(why);
  resolver_.cancel();
  retry_timer_.cancel();
  tracking_lost();
  state_ = State::Down;
  ejected_ = true;
  failover_hold_.set_wait(std::chrono::milliseconds(0));
  down_reason_ = why;
  fail_all(as_reply(
      error_message(ClientError::ShardConnectionLost, target_.shard_name, address_text(), why)));
  if (auto sink = std::move(push_sink_)) sink->connection_lost(target_.shard_index);
}

BackendConnectionPtr BackendConnection::open(boost::asio::io_context& io, BackendTarget target,
                                             std::shared_ptr<const config::Config> config,
                                             ShardStats& stats, Options options) {
  BackendConnectionPtr connection(
      new BackendConnection(io, std::move(target), std::move(config), stats, options.role));
  if (options.push_sink) connection->set_push_sink(std::move(options.push_sink));
  connection->wait_while_down(options.wait_while_down);
  connection->drains_ = options.drains;
  connection->start();
  return connection;
}

BackendConnectionPtr BackendConnection::down(boost::asio::io_context& io, BackendTarget target,
                                             std::shared_ptr<const config::Config> config,
                                             ShardStats& stats, ConnectionRole role,
                                             const std::string& reason) {
  BackendConnectionPtr connection(
      new BackendConnection(io, std::move(target), std::move(config), stats, role));
  connection->mark_down(reason);
  return connection;
}

void BackendConnection::mark_down(const std::string& reason) {
  state_ = State::Down;
  ejected_ = true;
  down_reason_ = reason;
}

void BackendConnection::retarget(std::size_t shard_index, std::string shard_name,
                                 std::shared_ptr<const config::Config> config) {
  target_.shard_index = shard_index;
  target_.shard_name = std::move(shard_name);
  config_ = std::move(config);
  confirms_ = config_->confirms_writes();
}

void BackendConnection::close_socket(std::string_view why) {
  if (drains_ && wrote_ && carries_requests()) {
    // A plain socket is handed over, still open, to be read until every request on it is
    // answered (one proof); a TLS or subscriber one (whose pushes are not answers) is closed,
    // and only the kill proves it over.
    std::optional<DrainingConnections::Socket> late;
    auto& socket = stream_.socket();
    if (!stream_.tls() && role_ != ConnectionRole::Subscriber && socket.is_open()) {
      boost::system::error_code ignored;
      socket.cancel(ignored);  // this connection's own reads and waits end, reading nothing
      late.emplace(DrainingConnections::Socket{
          std::move(socket), pending_.size(),
          std::string(inbox_.data() + inbox_start_, inbox_end_ - inbox_start_)});
    }
    DrainingConnections::of(io_).add(target_, server_client_id_, config_, std::string(why),
                                     std::move(late));
  }
  wrote_ = false;
  ++generation_;
  boost::system::error_code ignored;
  stream_.socket().close(ignored);
  write_in_flight_ = false;
  writing_.clear();
  written_ = 0;
  flush_posted_ = false;
}

void BackendConnection::connect() {
  state_ = State::Connecting;
  fence_wait_ = false;
  flush_posted_ = false;
  connect_started_ = Clock::now();
  auto generation = ++generation_;
  resolver_.async_resolve(
      target_.address.host, std::to_string(target_.address.port),
      [self = BackendConnectionPtr(this), generation](boost::system::error_code ec,
                                                      const tcp::resolver::results_type& results) {
        if (generation != self->generation_) return;
        if (ec)
          return self->go_down("cannot resolve " + self->target_.address.host + ": " +
                               ec.message());
        asio::async_connect(self->stream_.socket(), results,
                            [self, generation](boost::system::error_code ec, const tcp::endpoint&) {
                              if (generation != self->generation_) return;
                              if (ec) return self->go_down(ec.message());
                              self->start_tls();
                            });
      });
}

// A shard with `tls: true` is spoken to through TLS, with the certificates in force now; its
// certificate is checked (backend.tls.verify) before anything is sent.
void BackendConnection::start_tls() {
  stream_.end_tls();
  if (!speaks_tls(*config_, target_.address)) return on_connected();
  auto contexts = tls_in_force();
  if (!contexts || !contexts->shards) return go_down("TLS is not set up (backend.tls)");
  auto& tls = stream_.start_tls(contexts->shards);
  expect_shard_name(tls.native_handle(), *contexts, target_.address.host);
  stream_.async_handshake(
      asio::ssl::stream_base::client,
      [self = BackendConnectionPtr(this), generation = generation_](boost::system::error_code ec) {
        if (generation != self->generation_) return;
        if (!ec) return self->on_connected();
        std::string why = "TLS handshake failed: " +
                          handshake_failure(self->stream_.tls_stream()->native_handle(), ec);
        if (!self->ejected_)  // once, not on every retry
          spdlog::error("shard '{}' ({}): {}", self->target_.shard_name, self->address_text(), why);
        self->go_down(why);
      });
}

void BackendConnection::on_connected() {
  boost::system::error_code ignored;
  stream_.socket().set_option(tcp::no_delay(true), ignored);
  stream_.socket().set_option(asio::socket_base::keep_alive(true), ignored);
  state_ = State::Up;
  last_reply_ = Clock::now();
  scripts_.clear();  // perhaps a new server process: it has no scripts loaded by us
  handshake();
  if (!ejected_) release_waiting();  // held while it connected again (behind the handshake)
  // A shard that was marked down is taken back only once it answers: a stopped process
  // still accepts connections in the kernel.
  if (ejected_) probe();
  inbox_start_ = inbox_end_ = 0;
  scanner_.reset();
  read();
  schedule_flush();
  if (!ejected_ && on_ready_) on_ready_();
}

// Whether a request of a client (or a pinned transaction's MULTI) is unanswered: given up on,
// it may still run. A handshake, a health PING or a WAIT running late changes nothing.
bool BackendConnection::carries_requests() const {
  return std::any_of(pending_.begin(), pending_.end(), [](const Pending& p) {
    return p.owner == Owner::Client || p.owner == Owner::ClientWrite || p.owner == Owner::Silent;
  });
}

// HELLO/AUTH, SELECT and CLIENT ID go first on every new connection; their replies are
// checked, not forwarded.
void BackendConnection::handshake() {
  // The connection that proves others over logs in as backend.username/password, not as the
  // fleet's per-lease user: it must get through while this router rejoins (below, flush()).
  auto login = drains_ ? shard_login(config_->backend)
                       : ShardLogin{config_->backend.username, config_->backend.password};
  std::string prefix;
  protocol::RespWriter writer(prefix);
  // Whose each reply is, in the order the commands are written: a Handshake's error means the
  // shard refuses Santral; Naming's and ClientId's do not (the server still serves).
  std::vector<Owner> owners;
  auto command = [&](std::span<const std::string_view> args, Owner owner) {
    writer.command(args);
    owners.push_back(owner);
  };
  std::string_view user = login.user.empty() ? std::string_view("default") : login.user;
  if (target_.profile.protocol == 3) {
    if (login.password.empty()) {
      std::string_view args[] = {"HELLO", "3"};
      command(args, Owner::Handshake);
    } else {
      std::string_view args[] = {"HELLO", "3", "AUTH", user, login.password};
      command(args, Owner::Handshake);
    }
  } else if (!login.password.empty()) {
    std::string_view args[] = {"AUTH", user, login.password};
    command(args, Owner::Handshake);
  }
  if (role_ == ConnectionRole::Tracking) {
    // Every key read here from now on is tracked; Redis pushes `invalidate` when it changes.
    std::string_view args[] = {"CLIENT", "TRACKING", "ON"};
    command(args, Owner::Handshake);
  } else if (role_ == ConnectionRole::TrackingBroadcast) {
    // Every key written anywhere on the shard is pushed here.
    std::string_view args[] = {"CLIENT", "TRACKING", "ON", "BCAST"};
    command(args, Owner::Handshake);
  }
  std::string db = std::to_string(target_.profile.database);
  if (target_.profile.database != 0) {
    std::string_view args[] = {"SELECT", db};
    command(args, Owner::Handshake);
  }
  server_client_id_ = 0;
  if (drains_) {
    // Named for the router and this run of it, so that a later run can end this connection
    // (connection_name.h).
    if (!connection_name().empty()) {
      std::string_view args[] = {"CLIENT", "SETNAME", connection_name()};
      command(args, Owner::Naming);
    }
    // The connection's id on its server: what Santral gives up on is proven not to run by
    // `CLIENT KILL ID` (draining_connections.h), and a switch of topology may have to end the
    // call blocked on a lent connection (CLIENT UNBLOCK, router/routes/blocked_calls.h).
    // Requests wait for it, so that every request sent has an id to end it by.
    std::string_view args[] = {"CLIENT", "ID"};
    command(args, Owner::ClientId);
  }
  auto now = Clock::now();
  for (auto owner = owners.rbegin(); owner != owners.rend(); ++owner)
    pending_.push_front({nullptr, 0, 0, *owner, now, now + config_->timeouts.request});
  if (owners.empty()) {
    outbox_.insert(0, prefix);
    return;
  }
  // Nothing else goes out before the handshake has answered (handshake_answered()).
  handshake_left_ = owners.size();
  held_ = std::exchange(outbox_, std::move(prefix));
}

void BackendConnection::handshake_answered() {
  if (handshake_left_ == 0 || --handshake_left_ > 0) return;
  outbox_.append(held_);
  held_.clear();
  schedule_flush();
}

// The shard answered the handshake with an error: the connection is down until it accepts.
void BackendConnection::handshake_refused(std::string_view frame) {
  std::string why(frame.substr(1, frame.size() - 3));
  // Tracking needs what shared connections do not: HELLO 3 and CLIENT TRACKING.
  std::string advice = tracks()
                           ? "the near cache and client-side caching need Redis >= 6 and "
                             "permission for CLIENT TRACKING; near-cache GETs go the usual way "
                             "meanwhile, or set near_cache.enabled: false"
                           : "check backend.password / backend.database";
  if (!ejected_)  // once, not on every retry
    spdlog::error("shard '{}' ({}) refused Santral's {}handshake: {} ({})", target_.shard_name,
                  address_text(), tracks() ? "tracking " : "", why, advice);
  go_down("handshake failed: " + why + " (" + advice + ")");
}

void BackendConnection::probe() {
  auto now = Clock::now();
  queue().append(kPing);
  pending_.push_back({nullptr, 0, 0, Owner::Probe, now, now + config_->timeouts.request});
  schedule_flush();
}

void BackendConnection::send(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                             std::uint32_t fragment, bool timed,
                             const config::WriteConcern* concern) {
  enqueue(request, std::move(sink), slot, fragment,
          timed ? Clock::duration(config_->timeouts.request) : Clock::duration::max(), concern);
}

void BackendConnection::send_within(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                                    std::uint32_t fragment, std::chrono::milliseconds limit) {
  enqueue(request, std::move(sink), slot, fragment, limit);
}

void BackendConnection::tell_timing(ReplySink& sink, std::uint64_t slot, std::uint32_t fragment,
                                    Clock::duration held, Clock::duration waited) const {
  sink.timed(slot, fragment, {target_.shard_index, held, waited});
}

void BackendConnection::enqueue(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                                std::uint32_t fragment, Clock::duration limit,
                                const config::WriteConcern* concern, Clock::duration held) {
  fence_lifted();
  if (holds_while_down()) {
    failover_hold_.hold(request, std::move(sink), slot, fragment, limit, concern);
    return;
  }
  if (ejected_ || state_ == State::Down || state_ == State::Stopped) {
    std::string reply =
        state_ == State::Stopped
            ? as_reply(error_message(ClientError::ShuttingDown))
            : as_reply(error_message(ClientError::ShardUnavailable, target_.shard_name,
                                     address_text(), down_reason_));
    ++stats_->errors;
    tell_timing(*sink, slot, fragment, held, {});
    sink->deliver(slot, fragment, reply);
    return;
  }
  auto now = Clock::now();
  queue().append(request);
  ++stats_->requests;
  stats_->bytes_sent += request.size();
  auto deadline = limit == Clock::duration::max() ? Clock::time_point::max() : now + limit;
  Owner owner = Owner::Client;
  const auto& wanted = concern ? *concern : config_->write_concern;
  if (confirms_writes() && writes_.confirms(request) && wanted.replicas > 0) {
    owner = Owner::ClientWrite;
    unconfirmed_writes_ = true;
    batch_.replicas = std::max(batch_.replicas, wanted.replicas);
    batch_.timeout = std::max(batch_.timeout, wanted.timeout);
  }
  pending_.push_back({std::move(sink), slot, fragment, owner, now, deadline, wanted, held});
  if (state_ == State::Up) schedule_flush();
}

void BackendConnection::adopt_waiting(std::deque<Waiting> waiting) {
  if (failover_hold_.empty() && !holds_while_down()) {
    auto now = Clock::now();
    for (auto& w : waiting)
      enqueue(w.request, std::move(w.sink), w.slot, w.fragment, w.limit,
              w.concern ? &*w.concern : nullptr, now - w.arrived);
    return;
  }
  // Older than what this connection holds: they go first.
  failover_hold_.put_first(std::move(waiting));
  if (!holds_while_down()) release_waiting();
}

// The shard answers again: what waited for it goes, in the order it came.
void BackendConnection::release_waiting() {
  auto now = Clock::now();
  for (auto& w : failover_hold_.take())
    enqueue(w.request, std::move(w.sink), w.slot, w.fragment, w.limit,
            w.concern ? &*w.concern : nullptr, now - w.arrived);
}

void BackendConnection::expire_waiting(Clock::time_point now) {
  while (auto waiting = failover_hold_.take_expired(now)) {
    ++stats_->errors;
    tell_timing(*waiting->sink, waiting->slot, waiting->fragment, now - waiting->arrived, {});
    waiting->sink->deliver(
        waiting->slot, waiting->fragment,
        as_reply(error_message(ClientError::FailoverWaitOver, target_.shard_name, address_text(),
                               down_reason_, failover_hold_.wait().count())));
  }
}

void BackendConnection::confirm_writes() {
  if (!unconfirmed_writes_ || writes_.in_multi()) return;
  unconfirmed_writes_ = false;
  auto now = Clock::now();
  queue().append(wait_command(batch_));
  pending_.push_back(
      {nullptr, 0, 0, Owner::WriteConcern, now, now + batch_.timeout + config_->timeouts.request});
  batch_ = {0, std::chrono::milliseconds(0)};
}

// WAIT's answer: how many replicas confirmed the writes before it. Each held reply is
// delivered, or, short of the count its write asked for, replaced by NOREPLICAS (the write
// ran on the primary).
void BackendConnection::writes_confirmed(std::string_view frame) {
  std::int64_t confirmed = 0;
  if (frame.size() > 3 && frame.front() == ':')
    confirmed =
        protocol::parse_integer<std::int64_t>(frame.substr(1, frame.size() - 3)).value_or(0);
  for (auto& held : std::exchange(awaiting_, {})) {
    bool keep = confirmed >= static_cast<std::int64_t>(held.concern.replicas) ||
                protocol::is_error_frame(held.frame);
    if (keep) {
      held.sink->deliver(held.slot, held.fragment, held.frame);
      continue;
    }
    ++stats_->writes_unconfirmed;
    held.sink->deliver(
        held.slot, held.fragment,
        as_reply(error_message(ClientError::WriteNotReplicated, target_.shard_name, address_text(),
                               confirmed, held.concern.replicas, held.concern.timeout.count())));
  }
}

void BackendConnection::send_silent(std::string_view request) {
  fence_lifted();
  if (ejected_ || state_ == State::Down || state_ == State::Stopped) return;
  if (confirms_writes()) writes_.confirms(request);  // the MULTI of a pinned transaction
  auto now = Clock::now();
  queue().append(request);
  pending_.push_back({nullptr, 0, 0, Owner::Silent, now, now + config_->timeouts.request});
  if (state_ == State::Up) schedule_flush();
}

// Defers the write to the end of this event-loop turn, so that every request queued by every
// client in the turn leaves in one write.
void BackendConnection::schedule_flush() {
  if (flush_posted_ || write_in_flight_) return;
  flush_posted_ = true;
  asio::post(io_, [self = BackendConnectionPtr(this), generation = generation_] {
    if (generation != self->generation_) return;
    self->flush_posted_ = false;
    self->flush();
  });
}

// Writes what is queued, one bounded write system call at a time, checking the fleet's write
// fence (write_fence.h) before each: the rest of a batch partly written when a router froze
// must not reach the shard after it wakes past its lease. On a plain socket each write is this
// function's own non-blocking call, made after the check; a full socket is waited for
// (wait_write), never handed to the reactor to write later. A TLS record is written by asio's
// TLS stream, which may write it once the socket takes it.
void BackendConnection::flush() {
  while (!write_in_flight_ && state_ == State::Up) {
    if (written_ == writing_.size()) {
      confirm_writes();
      if (outbox_.empty()) return;
      writing_.clear();
      written_ = 0;
      writing_.swap(outbox_);
    }
    // The fence holds back every write of a router past its lease but the proving
    // connection's: a CLIENT KILL ID of this router's own connection writes no data, and a
    // rejoining router waits for those proofs (FleetSync::rejoin fences every connection).
    if (auto late = drains_ ? write_fence_late_ms() : 0; late > 0)
      return connection_failed(
          as_reply(error_message(
              ClientError::ShardConnectionLost, target_.shard_name, address_text(),
              fmt::format("this router has not confirmed its fleet lease in time ({} ms late)",
                          late))),
          false);
    auto chunk =
        asio::buffer(writing_.data() + written_, std::min(writing_.size() - written_, kMaxWrite));
    // Requests go out only once the handshake has answered (held_ until then).
    if (handshake_left_ == 0) wrote_ = true;
    if (stream_.tls()) return write_tls(chunk);
    boost::system::error_code ec;
    auto& socket = stream_.socket();
    if (!socket.non_blocking()) socket.non_blocking(true, ec);
    std::size_t bytes = ec ? 0 : socket.write_some(chunk, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      write_in_flight_ = true;
      socket.async_wait(Stream::Socket::wait_write,
                        [self = BackendConnectionPtr(this),
                         generation = generation_](boost::system::error_code wait_error) {
                          if (generation != self->generation_) return;
                          self->write_in_flight_ = false;
                          if (wait_error) return self->write_failed(wait_error);
                          self->flush();
                        });
      return;
    }
    if (ec) return write_failed(ec);
    written_ += bytes;
  }
}

void BackendConnection::write_tls(asio::const_buffer chunk) {
  write_in_flight_ = true;
  stream_.async_write_some(chunk, [self = BackendConnectionPtr(this), generation = generation_](
                                      boost::system::error_code ec, std::size_t bytes) {
    if (generation != self->generation_) return;
    self->write_in_flight_ = false;
    if (ec) return self->write_failed(ec);
    self->written_ += bytes;
    self->flush();
  });
}

void BackendConnection::write_failed(boost::system::error_code ec) {
  connection_failed(as_reply(error_message(ClientError::ShardConnectionLost, target_.shard_name,
                                           address_text(), ec.message())),
                    true);
}

void BackendConnection::read() {
  if (inbox_end_ == inbox_.size()) {
    if (inbox_start_ > 0) {
      // Keep the unfinished frame, drop what was delivered; the scanner counts from the
      // frame's start, so moving it is safe.
      std::copy(inbox_.begin() + static_cast<std::ptrdiff_t>(inbox_start_),
                inbox_.begin() + static_cast<std::ptrdiff_t>(inbox_end_), inbox_.begin());
      inbox_end_ -= inbox_start_;
      inbox_start_ = 0;
    } else {
      inbox_.resize(inbox_.size() * 2);
    }
  }
  stream_.async_read_some(
      asio::buffer(inbox_.data() + inbox_end_, inbox_.size() - inbox_end_),
      [self = BackendConnectionPtr(this), generation = generation_](boost::system::error_code ec,
                                                                    std::size_t bytes) {
        if (generation != self->generation_) return;
        if (ec) {
          std::string why =
              ec == asio::error::eof ? "the shard closed the connection" : ec.message();
          return self->connection_failed(
              as_reply(error_message(ClientError::ShardConnectionLost, self->target_.shard_name,
                                     self->address_text(), why)),
              true);
        }
        self->on_read(bytes);
      });
}

void BackendConnection::on_read(std::size_t bytes) {
  inbox_end_ += bytes;
  stats_->bytes_received += bytes;
  if (!deliver_frames()) return;
  if (inbox_start_ == inbox_end_) {
    inbox_start_ = inbox_end_ = 0;
    if (inbox_.size() > 4 * kInboxInitial) {
      inbox_.resize(kInboxInitial);
      inbox_.shrink_to_fit();
    }
  }
  read();
}

// A pub/sub message rather than a reply: a RESP2 array or RESP3 push whose first element is
// message, pmessage or smessage (Redis writes them exactly in this form). Subscribe
// confirmations are replies to the (P|S)SUBSCRIBE that asked for them.
bool BackendConnection::is_push(std::string_view frame) const {
  if (frame.size() < 4 || (frame[0] != '*' && frame[0] != '>')) return false;
  std::string_view rest = frame.substr(1);
  return rest.starts_with("3\r\n$7\r\nmessage\r\n") ||
         rest.starts_with("4\r\n$8\r\npmessage\r\n") || rest.starts_with("3\r\n$8\r\nsmessage\r\n");
}

// Hands every complete reply in the inbox to the request that owns it. False when the
// connection had to be reset.
bool BackendConnection::deliver_frames() {
  BackendConnectionPtr keep(this);  // a sink may drop the last other reference
  auto generation = generation_;
  auto now = Clock::now();
  while (inbox_start_ < inbox_end_) {
    std::size_t size = 0;
    std::string_view input(inbox_.data() + inbox_start_, inbox_end_ - inbox_start_);
    auto status = scanner_.scan(input, size);
    if (status == protocol::ScanStatus::NeedMore) return true;
    std::string_view frame = input.substr(0, std::min(size, input.size()));
    // On a subscriber connection, messages go to the subscriber. Elsewhere only a RESP3 push
    // can be unasked for (none is expected); an array is always somebody's reply, even one
    // that happens to start with "message".
    bool subscriber = role_ == ConnectionRole::Subscriber;
    if (status == protocol::ScanStatus::Complete &&
        (subscriber ? is_push(frame) : frame.front() == '>')) {
      inbox_start_ += size;
      if ((subscriber || tracks()) && push_sink_)
        push_sink_->deliver(kPushSlot, static_cast<std::uint32_t>(target_.shard_index), frame);
      if (generation != generation_) return false;
      continue;
    }
    if (status == protocol::ScanStatus::Error || pending_.empty()) {
      spdlog::error("shard '{}' ({}) sent {}; resetting the connection", target_.shard_name,
                    address_text(),
                    status == protocol::ScanStatus::Error ? "bytes that are not RESP"
                                                          : "a reply nobody asked for");
      connection_failed(as_reply(error_message(ClientError::ShardProtocolError, target_.shard_name,
                                               address_text())),
                        true);
      return false;
    }
    inbox_start_ += size;
    last_reply_ = now;
    failures_ = 0;
    Pending owner = std::move(pending_.front());
    pending_.pop_front();
    switch (owner.owner) {
      case Owner::Client:
        stats_->latency.record(now - owner.sent);
        if (protocol::is_error_frame(frame)) ++stats_->errors;
        tell_timing(*owner.sink, owner.slot, owner.fragment, owner.held, now - owner.sent);
        owner.sink->deliver(owner.slot, owner.fragment, frame);
        break;
      case Owner::ClientWrite:
        stats_->latency.record(now - owner.sent);
        if (protocol::is_error_frame(frame)) ++stats_->errors;
        tell_timing(*owner.sink, owner.slot, owner.fragment, owner.held, now - owner.sent);
        awaiting_.push_back(
            {std::move(owner.sink), owner.slot, owner.fragment, std::string(frame), owner.concern});
        break;
      case Owner::WriteConcern:
        writes_confirmed(frame);
        break;
      case Owner::Handshake:
        if (protocol::is_error_frame(frame)) {
          handshake_refused(frame);
          return false;
        }
        handshake_answered();
        break;
      case Owner::Probe:
        if (ejected_) {
          ejected_ = false;
          backoff_ = std::chrono::milliseconds(0);
          spdlog::info("shard '{}' ({}) is up again", target_.shard_name, address_text());
          down_reason_.clear();
          release_waiting();
          if (on_ready_) on_ready_();
        }
        break;
      case Owner::Silent:
        break;
      case Owner::Naming:
        handshake_answered();
        break;
      case Owner::ClientId:
        if (frame.size() > 3 && frame.front() == ':')
          server_client_id_ =
              protocol::parse_integer<std::uint64_t>(frame.substr(1, frame.size() - 3)).value_or(0);
        else if (!ejected_)  // once, not on every reconnect
          spdlog::warn(
              "shard '{}' ({}) refused CLIENT ID ({}): a request Santral gives up on there cannot "
              "be proven not to run late, so a move's switch waits for the shard to close it; "
              "allow CLIENT ID and CLIENT KILL for Santral's user on the shard",
              target_.shard_name, address_text(), protocol::line_text(frame));
        handshake_answered();
        break;
    }
    if (generation != generation_) return false;
  }
  return true;
}

void BackendConnection::fail_all(const std::string& reply) {
  // What was queued so far fails; what a sink sends again while hearing of it stays queued.
  auto failed = std::move(pending_);
  pending_.clear();
  outbox_.clear();
  held_.clear();
  handshake_left_ = 0;
  unconfirmed_writes_ = false;
  batch_ = {0, std::chrono::milliseconds(0)};
  writes_ = {};
  // Writes that ran but whose WAIT never answered: their outcome is as unknown as the rest.
  for (auto& held : std::exchange(awaiting_, {})) {
    ++stats_->errors;
    held.sink->deliver(held.slot, held.fragment, reply);
  }
  auto now = Clock::now();
  for (auto& p : failed) {
    if (p.owner != Owner::Client && p.owner != Owner::ClientWrite) continue;
    ++stats_->errors;
    tell_timing(*p.sink, p.slot, p.fragment, p.held, now - p.sent);
    p.sink->deliver(p.slot, p.fragment, reply);
  }
}

// The connection broke or a reply took too long: everything in flight fails with `reply`, and
// a late answer to it can never arrive on a connection that serves later requests. A shared
// connection reconnects at once, unless the failures in a row mark the shard down; a lent one
// stays down, its owner decides. The new state is set before anyone hears of the failure, so a
// client that sends again from its error handler queues to the new connection or fails fast.
void BackendConnection::connection_failed(const std::string& reply, bool counts_as_failure) {
  if (state_ == State::Stopped) return;
  close_socket(std::string_view(reply).substr(1, reply.size() - 3));
  tracking_lost();
  if (role_ != ConnectionRole::Shared && !tracks()) {
    state_ = State::Down;
    down_reason_ = "the connection was lost";
    fail_all(reply);
    if (auto sink = std::move(push_sink_)) sink->connection_lost(target_.shard_index);
    return;
  }
  if (counts_as_failure) ++failures_;
  if (ejected_ || failures_ >= config_->health.failures) {
    return go_down(fmt::format("{} failures in a row, the last: {}", failures_,
                               std::string_view(reply).substr(1, reply.size() - 3)));
  }
  if (drains_ && write_fence_late_ms() > 0) {
    // Out of touch with etcd: no write may go out, the handshake's neither; connecting again
    // at once would be failed by it again, thousands of times a second.
    state_ = State::Down;
    fence_wait_ = true;
    down_reason_ = "this router has not confirmed its fleet lease";
    fail_all(reply);
    retry_timer_.expires_after(config_->timeouts.reconnect_min);
    retry_timer_.async_wait([self = BackendConnectionPtr(this),
                             generation = generation_](boost::system::error_code ec) {
      if (ec || generation != self->generation_) return;
      self->connect();
    });
    return;
  }
  connect();
  fail_all(reply);
}

// A connection the write fence closed waits before connecting again (connection_failed); a
// request that comes once the lease is confirmed again connects it at once instead.
void BackendConnection::fence_lifted() {
  if (!fence_wait_ || state_ != State::Down || write_fence_late_ms() > 0) return;
  fence_wait_ = false;
  retry_timer_.cancel();
  connect();
}

// A tracking connection's server forgets what it tracked for it when the connection ends:
// whatever was cached through it must go before anyone can be answered from it again.
void BackendConnection::tracking_lost() {
  if (tracks() && push_sink_) push_sink_->connection_lost(target_.shard_index);
}

void BackendConnection::go_down(const std::string& reason) {
  if (state_ == State::Stopped) return;
  close_socket(reason);
  tracking_lost();
  bool first = !ejected_;
  down_reason_ = reason;
  state_ = State::Down;
  ejected_ = true;
  fail_all(as_reply(
      error_message(ClientError::ShardUnavailable, target_.shard_name, address_text(), reason)));
  if (role_ != ConnectionRole::Shared && !tracks()) {
    if (auto sink = std::move(push_sink_)) sink->connection_lost(target_.shard_index);
    return;
  }
  backoff_ = backoff_.count() == 0 ? config_->timeouts.reconnect_min
                                   : std::min(backoff_ * 2, config_->timeouts.reconnect_max);
  if (first && failover_hold_.holds())
    spdlog::warn(
        "shard '{}' ({}) is down: {}; its requests wait up to {} ms (failover.wait_ms) "
        "for it or for Sentinel's new primary",
        target_.shard_name, address_text(), reason, failover_hold_.wait().count());
  else if (first)
    spdlog::warn("shard '{}' ({}) is down: {}; its requests fail at once until it answers again",
                 target_.shard_name, address_text(), reason);
  retry_timer_.expires_after(backoff_);
  retry_timer_.async_wait(
      [self = BackendConnectionPtr(this), generation = generation_](boost::system::error_code ec) {
        if (ec || generation != self->generation_) return;
        self->connect();
      });
}

void BackendConnection::check_deadlines(Clock::time_point now) {
  expire_waiting(now);
  if (state_ == State::Connecting && now - connect_started_ > config_->timeouts.connect) {
    go_down("no connection within " + std::to_string(config_->timeouts.connect.count()) +
            " ms (timeouts.connect_ms)");
    return;
  }
  if (state_ != State::Up) return;
  if (!pending_.empty() && now > pending_.front().deadline) {
    bool client = pending_.front().owner == Owner::Client ||
                  pending_.front().owner == Owner::ClientWrite ||
                  pending_.front().owner == Owner::WriteConcern;
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(pending_.front().deadline -
                                                                       pending_.front().sent);
    // A script's own limit (send_within), or every other request's.
    std::string_view setting =
        limit == config_->timeouts.script && limit != config_->timeouts.request
            ? "timeouts.script_ms"
            : "timeouts.request_ms";
    if (client) {
      ++stats_->timeouts;
      spdlog::warn(
          "shard '{}' ({}) did not answer within {} ms; dropping {} in-flight requests "
          "and reconnecting",
          target_.shard_name, address_text(), limit.count(), pending_.size());
    }
    connection_failed(as_reply(error_message(ClientError::ShardTimeout, target_.shard_name,
                                             address_text(), limit.count(), setting)),
                      true);
    return;
  }
  // Active health check: an idle shared connection says PING now and then, so a shard that
  // died quietly is noticed before a client needs it.
  if ((role_ == ConnectionRole::Shared || tracks()) && pending_.empty() && !ejected_ &&
      now - last_reply_ > config_->health.interval) {
    last_reply_ = now;
    probe();
  }
}

void close_answered(std::vector<BackendConnectionPtr>& retired, Clock::time_point now) {
  auto all = std::move(retired);
  retired.clear();
  for (auto& connection : all) {
    if (connection->in_flight() > 0 && connection->usable()) {
      connection->check_deadlines(now);
      retired.push_back(std::move(connection));
    } else {
      connection->stop();
    }
  }
}

}  // namespace santral::router
