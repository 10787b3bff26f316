#include "router/backend/backend_connection.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/backend/draining_connections.h"
#include "router/backend/write_fence.h"

namespace santral::router {

namespace asio = boost::asio;
using protocol::ClientError;
using protocol::error_message;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

std::string as_reply(std::string_view message) {
  std::string reply;
  protocol::RespWriter(reply).error(message);
  return reply;
}

// An error reply about the shard: each such message starts with its name and address.
template <typename... Args>
std::string shard_error(const BackendTarget& target, ClientError error, Args&&... args) {
  return as_reply(
      error_message(error, target.shard_name, target.address.text(), std::forward<Args>(args)...));
}

bool confirms_writes(const config::Config& config, ConnectionRole role) {
  return config.confirms_writes() &&
         (role == ConnectionRole::Shared || role == ConnectionRole::Dedicated);
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
      dial_(io),
      retry_timer_(io),
      health_(*config_),
      pushes_(role),
      writes_(confirms_writes(*config_, role)),
      writer_(io, stream_, fence_, *this) {}

void BackendConnection::stop() {
  state_ = State::Stopped;
  close_socket("the connection was closed");
  retry_timer_.cancel();
  pushes_.drop();
  auto reply = as_reply(error_message(ClientError::ShuttingDown));
  fail_all(reply);
  failover_hold_.fail(reply, *stats_);
}

void BackendConnection::abandon(const std::string& why) {
  if (state_ == State::Stopped) return;
  close_socket(why);
  retry_timer_.cancel();
  pushes_.tracking_lost(target_.shard_index);
  state_ = State::Down;
  health_.eject(why);
  failover_hold_.set_wait(std::chrono::milliseconds(0));
  fail_all(shard_error(target_, ClientError::ShardConnectionLost, why));
  pushes_.lost(target_.shard_index);
}

BackendConnectionPtr BackendConnection::open(boost::asio::io_context& io, BackendTarget target,
                                             std::shared_ptr<const config::Config> config,
                                             ShardStats& stats, Options options) {
  BackendConnectionPtr connection(
      new BackendConnection(io, std::move(target), std::move(config), stats, options.role));
  if (options.push_sink) connection->set_push_sink(std::move(options.push_sink));
  connection->wait_while_down(options.wait_while_down);
  connection->drains_ = options.drains;
  connection->fence_.set_fenced(options.drains);
  connection->connect();
  return connection;
}

BackendConnectionPtr BackendConnection::down(boost::asio::io_context& io, BackendTarget target,
                                             std::shared_ptr<const config::Config> config,
                                             ShardStats& stats, ConnectionRole role,
                                             const std::string& reason) {
  BackendConnectionPtr connection(
      new BackendConnection(io, std::move(target), std::move(config), stats, role));
  connection->state_ = State::Down;
  connection->health_.eject(reason);
  return connection;
}

void BackendConnection::retarget(std::size_t shard_index, std::string shard_name,
                                 std::shared_ptr<const config::Config> config) {
  target_.shard_index = shard_index;
  target_.shard_name = std::move(shard_name);
  config_ = std::move(config);
  health_.configure(*config_);
  writes_.set_on(confirms_writes(*config_, role_));
}

void BackendConnection::close_socket(std::string_view why) {
  if (drains_ && wrote_ && in_flight_.carries_requests()) {
    auto late = DrainingConnections::take_socket(stream_, role_ != ConnectionRole::Subscriber,
                                                 in_flight_.size(), inbox_.unread());
    DrainingConnections::of(io_).add(target_, handshake_.server_client_id(), config_,
                                     std::string(why), std::move(late));
  }
  wrote_ = false;
  ++generation_;
  dial_.cancel();
  boost::system::error_code ignored;
  stream_.socket().close(ignored);
  writer_.reset();
}

void BackendConnection::connect() {
  state_ = State::Connecting;
  fence_.connecting();
  writer_.reset();
  ++generation_;
  dial_.start(stream_, config_, target_, health_.ejected(),
              [self = BackendConnectionPtr(this)](const std::string& why) {
                if (!why.empty()) return self->go_down(why);
                self->on_connected();
              });
}

void BackendConnection::on_connected() {
  boost::system::error_code ignored;
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
  stream_.socket().set_option(asio::socket_base::keep_alive(true), ignored);
  state_ = State::Up;
  health_.connected(Clock::now());
  scripts_.forget();  // perhaps a new server process: it has no scripts loaded by us
  handshake();
  if (!health_.ejected())
    send_waiting(failover_hold_.take());  // held while it connected again (behind the handshake)
  // A shard that was marked down is taken back only once it answers: a stopped process
  // still accepts connections in the kernel.
  if (health_.ejected()) probe();
  inbox_.reset();
  read();
  writer_.schedule();
  if (!health_.ejected() && on_ready_) on_ready_();
}

// HELLO/AUTH, SELECT and CLIENT ID go first on every new connection (ShardHandshake); their
// replies are checked, not forwarded. The connection that proves others over logs in as
// backend.username/password: it must get through while this router rejoins (ConnectionFence).
void BackendConnection::handshake() {
  auto owners =
      handshake_.begin({config_->backend, target_.profile, role_, !drains_}, writer_.outbox());
  in_flight_.put_first(owners, Clock::now(), config_->timeouts.request);
}

void BackendConnection::probe() {
  auto now = Clock::now();
  queue().append(kPing);
  in_flight_.push_back({nullptr, 0, 0, ReplyOwner::Probe, now, now + config_->timeouts.request});
  writer_.schedule();
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

void BackendConnection::enqueue(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                                std::uint32_t fragment, Clock::duration limit,
                                const config::WriteConcern* concern, Clock::duration held) {
  fence_lifted();
  if (holds_while_down()) {
    failover_hold_.hold(request, std::move(sink), slot, fragment, limit, concern);
    return;
  }
  if (health_.ejected() || state_ == State::Down || state_ == State::Stopped) {
    std::string reply =
        state_ == State::Stopped
            ? as_reply(error_message(ClientError::ShuttingDown))
            : shard_error(target_, ClientError::ShardUnavailable, health_.down_reason());
    ++stats_->errors;
    sink->timed(slot, fragment, {target_.shard_index, held, {}});
    sink->deliver(slot, fragment, reply);
    return;
  }
  auto now = Clock::now();
  queue().append(request);
  ++stats_->requests;
  stats_->bytes_sent += request.size();
  auto deadline = limit == Clock::duration::max() ? Clock::time_point::max() : now + limit;
  const auto& wanted = concern ? *concern : config_->write_concern;
  ReplyOwner owner = writes_.sent(request, wanted) ? ReplyOwner::ClientWrite : ReplyOwner::Client;
  in_flight_.push_back({std::move(sink), slot, fragment, owner, now, deadline, wanted, held});
  if (state_ == State::Up) writer_.schedule();
}

void BackendConnection::adopt_waiting(std::deque<Waiting> waiting) {
  if (!failover_hold_.empty() || holds_while_down()) {
    // Older than what this connection holds: they go first.
    failover_hold_.put_first(std::move(waiting));
    if (holds_while_down()) return;
    waiting = failover_hold_.take();
  }
  send_waiting(std::move(waiting));
}

// The shard answers again: what waited for it goes, in the order it came.
void BackendConnection::send_waiting(std::deque<Waiting> waiting) {
  auto now = Clock::now();
  for (auto& w : waiting)
    enqueue(w.request, std::move(w.sink), w.slot, w.fragment, w.limit,
            w.concern ? &*w.concern : nullptr, now - w.arrived);
}

void BackendConnection::expire_waiting(Clock::time_point now) {
  if (!failover_hold_.expired(now)) return;
  failover_hold_.expire(now, target_.shard_index,
                        shard_error(target_, ClientError::FailoverWaitOver, health_.down_reason(),
                                    failover_hold_.wait().count()),
                        *stats_);
}

void BackendConnection::confirm_writes() {
  auto batch = writes_.wait_due();
  if (!batch) return;
  auto now = Clock::now();
  queue().append(wait_command(*batch));
  in_flight_.push_back({nullptr, 0, 0, ReplyOwner::WriteConcern, now,
                        now + batch->timeout + config_->timeouts.request});
}

void BackendConnection::send_silent(std::string_view request) {
  fence_lifted();
  if (health_.ejected() || state_ == State::Down || state_ == State::Stopped) return;
  writes_.sent_silent(request);  // the MULTI of a pinned transaction
  auto now = Clock::now();
  queue().append(request);
  in_flight_.push_back({nullptr, 0, 0, ReplyOwner::Silent, now, now + config_->timeouts.request});
  if (state_ == State::Up) writer_.schedule();
}

void BackendConnection::write_failed(const std::string& why, bool counts_as_failure) {
  connection_failed(shard_error(target_, ClientError::ShardConnectionLost, why), counts_as_failure);
}

void BackendConnection::read() {
  stream_.async_read_some(inbox_.room(), [self = BackendConnectionPtr(this),
                                          generation = generation_](boost::system::error_code ec,
                                                                    std::size_t bytes) {
    if (generation != self->generation_) return;
    if (ec) {
      std::string why = ec == asio::error::eof ? "the shard closed the connection" : ec.message();
      return self->connection_failed(
          shard_error(self->target_, ClientError::ShardConnectionLost, why), true);
    }
    self->on_read(bytes);
  });
}

void BackendConnection::on_read(std::size_t bytes) {
  inbox_.received(bytes);
  stats_->bytes_received += bytes;
  if (!deliver_frames()) return;
  inbox_.settle();
  read();
}

// Hands every complete reply in the inbox to the request that owns it. False when the
// connection had to be reset.
bool BackendConnection::deliver_frames() {
  BackendConnectionPtr keep(this);  // a sink may drop the last other reference
  auto generation = generation_;
  auto now = Clock::now();
  while (!inbox_.empty()) {
    std::string_view frame;
    std::size_t size = 0;
    auto status = inbox_.scan(frame, size);
    if (status == protocol::ScanStatus::NeedMore) return true;
    if (status == protocol::ScanStatus::Complete && pushes_.unasked(frame)) {
      inbox_.consume(size);
      pushes_.deliver(frame, target_.shard_index);
      if (generation != generation_) return false;
      continue;
    }
    if (status == protocol::ScanStatus::Error || in_flight_.empty()) {
      spdlog::error("shard '{}' ({}) sent {}; resetting the connection", target_.shard_name,
                    address_text(),
                    status == protocol::ScanStatus::Error ? "bytes that are not RESP"
                                                          : "a reply nobody asked for");
      connection_failed(shard_error(target_, ClientError::ShardProtocolError), true);
      return false;
    }
    inbox_.consume(size);
    health_.answered(now);
    auto owner = in_flight_.take_front();
    switch (owner.owner) {
      case ReplyOwner::Client:
      case ReplyOwner::ClientWrite:
        stats_->latency.record(now - owner.sent);
        if (protocol::is_error_frame(frame)) ++stats_->errors;
        owner.sink->timed(owner.slot, owner.fragment,
                          {target_.shard_index, owner.held, now - owner.sent});
        if (owner.owner == ReplyOwner::Client)
          owner.sink->deliver(owner.slot, owner.fragment, frame);
        else
          writes_.answered(std::move(owner.sink), owner.slot, owner.fragment, frame, owner.concern);
        break;
      case ReplyOwner::WriteConcern:
        writes_.confirmed(frame, target_.shard_name, address_text(), *stats_);
        break;
      case ReplyOwner::Handshake:
        if (protocol::is_error_frame(frame)) {
          // The shard refuses Santral: the connection is down until it accepts.
          go_down(ShardHandshake::refusal(frame, pushes_.tracks(), health_.ejected(),
                                          target_.shard_name, address_text()));
          return false;
        }
        [[fallthrough]];
      case ReplyOwner::Naming:
        if (handshake_.answered(writer_.outbox())) writer_.schedule();
        break;
      case ReplyOwner::ClientId:
        if (handshake_.client_id_answered(frame, health_.ejected(), target_.shard_name,
                                          address_text(), writer_.outbox()))
          writer_.schedule();
        break;
      case ReplyOwner::Probe:
        if (health_.probe_answered()) {
          spdlog::info("shard '{}' ({}) is up again", target_.shard_name, address_text());
          send_waiting(failover_hold_.take());
          if (on_ready_) on_ready_();
        }
        break;
      case ReplyOwner::Silent:
        break;
    }
    if (generation != generation_) return false;
  }
  return true;
}

void BackendConnection::fail_all(const std::string& reply) {
  // What was queued so far fails; what a sink sends again while hearing of it stays queued.
  auto failed = in_flight_.take();
  writer_.outbox().clear();
  handshake_.clear();
  writes_.fail(reply, *stats_);
  failed.fail(reply, target_.shard_index, *stats_);
}

// The connection broke or a reply took too long: everything in flight fails with `reply`, and
// a late answer to it can never arrive on a connection that serves later requests. A shared
// connection reconnects at once, unless the failures in a row mark the shard down; a lent one
// stays down, its owner decides. The new state is set before anyone hears of the failure, so a
// client that sends again from its error handler queues to the new connection or fails fast.
void BackendConnection::connection_failed(const std::string& reply, bool counts_as_failure) {
  if (state_ == State::Stopped) return;
  close_socket(std::string_view(reply).substr(1, reply.size() - 3));
  pushes_.tracking_lost(target_.shard_index);
  if (role_ != ConnectionRole::Shared && !pushes_.tracks()) {
    state_ = State::Down;
    health_.set_down_reason("the connection was lost");
    fail_all(reply);
    pushes_.lost(target_.shard_index);
    return;
  }
  if (health_.failed(counts_as_failure)) {
    return go_down(fmt::format("{} failures in a row, the last: {}", health_.failures(),
                               std::string_view(reply).substr(1, reply.size() - 3)));
  }
  if (fence_.wait()) {
    // Out of touch with etcd: no write may go out, the handshake's neither.
    state_ = State::Down;
    health_.set_down_reason("this router has not confirmed its fleet lease");
    fail_all(reply);
    return retry_after(config_->timeouts.reconnect_min);
  }
  connect();
  fail_all(reply);
}

// A connection the write fence closed waits before connecting again (connection_failed); a
// request that comes once the lease is confirmed again connects it at once instead.
void BackendConnection::fence_lifted() {
  if (state_ != State::Down || !fence_.lifted()) return;
  retry_timer_.cancel();
  connect();
}

void BackendConnection::go_down(const std::string& reason) {
  if (state_ == State::Stopped) return;
  close_socket(reason);
  pushes_.tracking_lost(target_.shard_index);
  bool first = health_.eject(reason);
  state_ = State::Down;
  fail_all(shard_error(target_, ClientError::ShardUnavailable, reason));
  if (role_ != ConnectionRole::Shared && !pushes_.tracks())
    return pushes_.lost(target_.shard_index);
  auto backoff = health_.next_backoff();
  if (first && failover_hold_.holds())
    spdlog::warn(
        "shard '{}' ({}) is down: {}; its requests wait up to {} ms (failover.wait_ms) "
        "for it or for Sentinel's new primary",
        target_.shard_name, address_text(), reason, failover_hold_.wait().count());
  else if (first)
    spdlog::warn("shard '{}' ({}) is down: {}; its requests fail at once until it answers again",
                 target_.shard_name, address_text(), reason);
  retry_after(backoff);
}

void BackendConnection::retry_after(std::chrono::milliseconds wait) {
  retry_timer_.expires_after(wait);
  retry_timer_.async_wait(
      [self = BackendConnectionPtr(this), generation = generation_](boost::system::error_code ec) {
        if (ec || generation != self->generation_) return;
        self->connect();
      });
}

void BackendConnection::check_deadlines(Clock::time_point now) {
  expire_waiting(now);
  if (state_ == State::Connecting && now - dial_.started() > config_->timeouts.connect) {
    go_down("no connection within " + std::to_string(config_->timeouts.connect.count()) +
            " ms (timeouts.connect_ms)");
    return;
  }
  if (state_ != State::Up) return;
  if (auto overdue = in_flight_.overdue(now, config_->timeouts)) {
    if (overdue->client) {
      ++stats_->timeouts;
      spdlog::warn(
          "shard '{}' ({}) did not answer within {} ms; dropping {} in-flight requests "
          "and reconnecting",
          target_.shard_name, address_text(), overdue->limit.count(), in_flight_.size());
    }
    connection_failed(
        shard_error(target_, ClientError::ShardTimeout, overdue->limit.count(), overdue->setting),
        true);
    return;
  }
  // Active health check: an idle shared connection says PING now and then, so a shard that
  // died quietly is noticed before a client needs it.
  if ((role_ == ConnectionRole::Shared || pushes_.tracks()) && in_flight_.empty() &&
      health_.probe_due(now))
    probe();
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
