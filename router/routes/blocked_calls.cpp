#include "router/routes/blocked_calls.h"

#include <memory>

#include <boost/asio/steady_timer.hpp>

#include "protocol/resp_writer.h"
#include "router/backend/connection_pool.h"

namespace santral::router {

namespace {

constexpr auto kUnblockAgain = std::chrono::milliseconds(10);

// CLIENT UNBLOCK <id> ERROR for the call on `blocked`, sent on `via` (a shared connection to
// the same server). ":0" means the call was not blocked at that moment: still on its way to
// the shard, or answered already. It is sent again until the call's connection has its reply;
// while that connection's handshake (which learns its id) is not answered, it waits for it.
class CallEnder final : public ReplySink {
 public:
  CallEnder(boost::asio::io_context& io, BackendConnectionPtr via, BackendConnectionPtr blocked)
      : timer_(io), via_(std::move(via)), blocked_(std::move(blocked)) {}

  void start() {
    using State = BackendConnection::State;
    bool waiting = blocked_->in_flight() > 0 &&
                   (blocked_->state() == State::Up || blocked_->state() == State::Connecting);
    if (!waiting) return;
    std::uint64_t id = blocked_->server_client_id();
    if (id == 0) {
      // The server would not say its id (CLIENT ID refused): closing the connection is the
      // only way left to end the call; its client hears that it may or may not have run.
      if (blocked_->state() == State::Up && !blocked_->handshaking()) return blocked_->stop();
      return again();
    }
    std::string command;
    std::string number = std::to_string(id);
    std::string_view args[] = {"CLIENT", "UNBLOCK", number, "ERROR"};
    protocol::RespWriter(command).command(args);
    via_->send(command, ReplySinkPtr(this), 0, 0);
  }

  void deliver(std::uint64_t, std::uint32_t, std::string_view reply) override {
    if (reply.starts_with(":0")) again();
  }

 private:
  void again() {
    timer_.expires_after(kUnblockAgain);
    timer_.async_wait([self = boost::intrusive_ptr<CallEnder>(this)](boost::system::error_code ec) {
      if (!ec) self->start();
    });
  }

  boost::asio::steady_timer timer_;
  BackendConnectionPtr via_;
  BackendConnectionPtr blocked_;
};

// Whether a call's keys are moved by `topology`: owned by another server, or still being
// pulled from one.
bool moves(const BlockedCalls::Call& call, const placement::Topology& topology) {
  const auto& map = *topology.map;
  const auto address = call.connection->target().address.text();
  for (const auto& key : call.keys) {
    std::size_t owner = map.shard_for_key(key);
    if (map.shard(owner).address.text() != address) return true;
    if (topology.move && topology.move->source_of(key, owner)) return true;
  }
  return false;
}

}  // namespace

void BlockedCalls::answered(const BackendConnection* connection, ConnectionPool& pool) {
  for (auto it = calls_.begin(); it != calls_.end(); ++it) {
    if (it->connection.get() != connection) continue;
    auto owned = std::move(it->connection);
    bool ended = it->ended_by_move;
    calls_.erase(it);
    // A CLIENT UNBLOCK for it may still be on its way: the connection is not lent again (it
    // would end the next call), it closes, and its CallEnder stops.
    if (ended)
      pool.drop(owned);
    else
      pool.give_back(std::move(owned));
    return;
  }
}

std::vector<BlockedCalls::Call> BlockedCalls::take_all() {
  auto calls = std::move(calls_);
  calls_.clear();
  return calls;
}

std::vector<BlockedCalls::Call> BlockedCalls::end_moved(const placement::Topology& topology,
                                                        ConnectionPool& pool,
                                                        boost::asio::io_context& io) {
  std::vector<Call> untold;
  for (auto it = calls_.begin(); it != calls_.end();) {
    if (it->ended_by_move || it->keys.empty() || !moves(*it, topology)) {
      ++it;
      continue;
    }
    auto shard = topology.map->shard_at(it->connection->target().address.text());
    if (!shard) {
      untold.push_back(std::move(*it));
      it = calls_.erase(it);
      continue;
    }
    it->ended_by_move = true;
    BackendConnectionPtr via(&pool.shared(*shard, pool.default_profile(), 0));
    boost::intrusive_ptr<CallEnder>(new CallEnder(io, std::move(via), it->connection))->start();
    ++it;
  }
  return untold;
}

bool BlockedCalls::ended_by_move(const BackendConnection* connection) const {
  for (const auto& call : calls_)
    if (call.connection.get() == connection) return call.ended_by_move;
  return false;
}

}  // namespace santral::router
