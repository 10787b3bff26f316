#include "tests/support/fake_request_context.h"

#include <stdexcept>

#include <fmt/format.h>

#include "placement/shard_map.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"

namespace santral::test {

FakeRequestContext::FakeRequestContext(FakeWorkerServices& worker, std::uint64_t id)
    : RequestContext(worker, state_, *this, *this, *this, *this), fake_worker_(worker) {
  state_.id = id;
  state_.authenticated = true;
  state_.peer = "127.0.0.1:50000";
  state_.local = "127.0.0.1:6379";
  // Backends hold it by intrusive pointer: the fake lives on the test's stack, so that count
  // must never drop to zero.
  intrusive_ptr_add_ref(this);
  fake_worker_.add_client(*this);
}

FakeRequestContext::~FakeRequestContext() {
  ending_ = true;
  fake_worker_.forget(*this);
  // What still holds this sink lets go of it: the fake's connections, a lent one and the
  // subscriber ones.
  transaction_.abandon(*this);
  subscriptions_.abandon(*this);
  for (auto& call : blocked_.take_all()) fake_worker_.pool().drop(call.connection);
  sent_current.clear();       // their sinks may hold this client
  fake_worker_.close_pool();  // connections given back to it may still owe this client replies
  for (auto& [shard, connection] : connections_) connection->stop();
}

std::optional<std::string> FakeRequestContext::answer(std::uint64_t slot) const {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return std::nullopt;
  return it->second.answer;
}

router::BackendConnection& FakeRequestContext::connection(std::size_t shard) {
  auto& connection = connections_[shard];
  if (!connection) {
    const auto& topology = fake_worker_.topology();
    const auto& server = topology.map->shard(shard);
    auto& stats = shard_stats_[shard];
    stats = std::make_unique<router::ShardStats>();
    connection.reset(new router::BackendConnection(fake_worker_.io(),
                                                   {shard, server.name, server.address, profile()},
                                                   topology.config, *stats));
  }
  return *connection;
}

std::uint64_t FakeRequestContext::requests_to(std::size_t shard) const {
  auto it = shard_stats_.find(shard);
  return it == shard_stats_.end() ? 0 : it->second->requests;
}

std::uint64_t FakeRequestContext::bytes_to(std::size_t shard) const {
  auto it = shard_stats_.find(shard);
  return it == shard_stats_.end() ? 0 : it->second->bytes_sent;
}

void FakeRequestContext::mark_down(std::size_t shard, const std::string& reason) {
  if (connections_.contains(shard))
    throw std::logic_error("mark a shard down before anything is sent to it");
  const auto& topology = fake_worker_.topology();
  const auto& server = topology.map->shard(shard);
  auto& stats = shard_stats_[shard];
  stats = std::make_unique<router::ShardStats>();
  connections_[shard] = router::BackendConnection::down(
      fake_worker_.io(), {shard, server.name, server.address, profile()}, topology.config, *stats,
      router::ConnectionRole::Shared, reason);
}

void FakeRequestContext::begin(const protocol::CommandSpec& command,
                               std::span<const std::string_view>, const router::Plan& plan) {
  begun = &command;
  begun_connection = plan.connection;
}

void FakeRequestContext::reply(std::string_view resp) {
  if (silent) return;
  replies.emplace_back(resp);
}

void FakeRequestContext::reply_error(std::string_view message) {
  std::string line;
  protocol::RespWriter(line).error(message);
  reply(line);
}

std::uint64_t FakeRequestContext::open_slot(std::uint32_t fragments,
                                            std::unique_ptr<router::ReplyMerge> merge) {
  auto id = next_slot_++;
  slots_[id] = Slot{fragments, 0, std::move(merge), false, std::nullopt};
  slot_opened(id);
  return id;
}

std::uint64_t FakeRequestContext::open_hidden_slot(std::uint32_t fragments,
                                                   std::unique_ptr<router::ReplyMerge> merge) {
  auto id = next_slot_++;
  slots_[id] = Slot{fragments, 0, std::move(merge), true, std::nullopt};
  return id;
}

void FakeRequestContext::forward(std::size_t shard, std::string_view request_bytes) {
  auto slot = open_slot(1, nullptr);
  forwarded.push_back({shard, std::string(request_bytes), slot});
}

void FakeRequestContext::send_current(router::BackendConnection& connection,
                                      std::string_view request_bytes, router::ReplySinkPtr sink,
                                      std::uint64_t slot, std::uint32_t fragment) {
  sent_current.push_back({connection.target().shard_index, std::string(request_bytes), slot,
                          fragment, std::move(sink)});
}

void FakeRequestContext::unblocked(const router::BackendConnection* connection) {
  blocked_.answered(connection, fake_worker_.pool());
}

// As ClientSession::unblock: every call answered (as timed out, or with the error), then its
// connection closed, which ends the command on the shard.
bool FakeRequestContext::unblock(bool with_error, protocol::ClientError error) {
  if (blocked_.empty()) return false;
  auto calls = blocked_.take_all();
  std::string unblocked;
  if (with_error) protocol::RespWriter(unblocked).error(protocol::error_message(error));
  for (auto& call : calls)
    deliver(call.slot, call.fragment, with_error ? unblocked : call.timeout_reply);
  for (auto& call : calls) fake_worker_.pool().drop(call.connection);
  return true;
}

bool FakeRequestContext::idle() const {
  for (const auto& [id, slot] : slots_)
    if (!slot.answer) return false;
  return true;
}

std::string FakeRequestContext::describe() {
  return fmt::format("id={} addr={} laddr={} name={} db={} user={} resp={}", state_.id, state_.peer,
                     state_.local, state_.name, state_.database, state_.user, state_.protocol);
}

void FakeRequestContext::deliver(std::uint64_t slot, std::uint32_t fragment,
                                 std::string_view reply) {
  if (ending_) return;
  if (slot == router::BackendConnection::kPushSlot) {
    pushed.emplace_back(reply);
    return;
  }
  auto it = slots_.find(slot);
  if (it == slots_.end() || it->second.answer) {
    stray.emplace_back(reply);
    return;
  }
  auto& open = it->second;
  if (open.merge) {
    open.merge->add(fragment, reply);
  } else if (open.fragments == 1) {
    open.answer = std::string(reply);
  }
  if (++open.delivered < open.fragments || !open.merge) return;
  std::string out;
  open.merge->finish(out);
  open.answer = std::move(out);
  open.merge.reset();  // as the reply queue does: the slot is answered, its merge is done
}

}  // namespace santral::test
