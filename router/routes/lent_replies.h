#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/intrusive_ptr.hpp>

#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// One request sent to several shards, each over a connection lent for it (SCRIPT KILL past a
// busy script, a transaction that runs on every shard): each reply goes to the client's slot,
// and the connections go back to the pool once every shard has answered.
class LentReplies final : public ReplySink {
 public:
  LentReplies(RequestContext& client, std::uint64_t slot, std::size_t shards)
      : session_(&client), slot_(slot), left_(shards) {}
  void lent(BackendConnectionPtr connection) { connections_.push_back(std::move(connection)); }
  void deliver(std::uint64_t /*slot*/, std::uint32_t fragment, std::string_view reply) override {
    session_->deliver(slot_, fragment, reply);
    if (--left_ > 0) return;
    for (auto& connection : connections_) session_->worker().pool().give_back(connection);
    connections_.clear();
  }

 private:
  boost::intrusive_ptr<RequestContext> session_;
  std::uint64_t slot_;
  std::size_t left_;
  std::vector<BackendConnectionPtr> connections_;
};

}  // namespace santral::router
