#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "config/read_from.h"
#include "protocol/errors.h"
#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"
#include "router/merge/reply_merge.h"
#include "router/runtime/active_request.h"
#include "router/runtime/client_roles.h"
#include "router/runtime/client_state.h"

namespace santral::protocol {
struct CommandSpec;
}  // namespace santral::protocol

namespace santral::router {

class WorkerServices;
struct PullOutcome;

// What a route, a command or the dispatcher may do with the request it handles and with the
// client that sent it: open its reply slots, send it to the shards the plan chose, answer it,
// and reach the client's state and its worker's services. Implemented by Client (one
// client connection, router/session/), and by a fake in the unit tests of routes and commands
// (tests/support/fake_request_context.h): nothing here needs a socket.
//
// Its virtuals are the request's: the current request, and its moves. What belongs to the
// client rather than to one request is reached through the client's roles
// (router/runtime/client_roles.h): held() for its transaction, subscriptions and blocking
// calls, caching() for its tracked reads and near-cache coherence, pushes() for what reaches it
// unasked (pub/sub messages, invalidations), link() for its connection (idle, CLIENT LIST line,
// close).
//
//    client --dispatch--> plan --kRoutes[kind]--> route --RequestContext--> backend
//       ^                                                                      |
//       +---------------------- ReplySink::deliver(slot, fragment) <----------+
//
// It is a ReplySink: backends deliver the replies of the slots it opened to it.
class RequestContext : public ReplySink {
 public:
  // The worker this client lives on (its thread, topology, pools, caches), and the client's
  // state: read by every request, so plain references rather than virtual calls.
  WorkerServices& worker() { return worker_; }
  ClientState& state() { return client_; }
  ConnectionProfile profile() const { return {client_.database, client_.protocol}; }
  // The client's roles (router/runtime/client_roles.h): the implementation itself, as a rule.
  HeldAcrossRequests& held() { return held_; }
  ClientCaching& caching() { return caching_; }
  PushChannel& pushes() { return pushes_; }
  ClientLink& link() { return link_; }

  // --- the current request ---
  // The command being handled; dispatch sets it before the strategy runs. From `plan`: the
  // connection kind backend() gives, and its namespace's read_from and write_concern.
  virtual void begin(const protocol::CommandSpec& command, std::span<const std::string_view> args,
                     const Plan& plan) = 0;
  // The request being dispatched: its bytes, its plan, and where it stands if it waits.
  virtual ActiveRequest& active() = 0;
  Plan& plan() { return active().plan; }
  std::string& scratch() { return active().scratch; }
  // Answers the current request with complete RESP bytes.
  virtual void reply(std::string_view resp) = 0;
  // Answers the current request with an error (message without '-' and CRLF).
  virtual void reply_error(std::string_view message) = 0;
  // Whether the current request's reply is dropped (CLIENT REPLY OFF / SKIP).
  virtual void set_silent(bool silent) = 0;
  // Opens the reply slot of the current request; its replies arrive through deliver().
  virtual std::uint64_t open_slot(std::uint32_t fragments = 1,
                                  std::unique_ptr<ReplyMerge> merge = nullptr) = 0;
  // A slot for work the client does not see (a pull of moving keys before the request runs):
  // later requests wait behind it like behind any reply, and nothing of it is written.
  virtual std::uint64_t open_hidden_slot(std::uint32_t fragments,
                                         std::unique_ptr<ReplyMerge> merge) = 0;
  // The reply slot the current request opened last, and how many this client opened in all
  // (before and after a route: whether it opened one).
  std::uint64_t last_slot() const { return last_slot_; }
  std::uint64_t opened_slots() const { return opened_slots_; }
  // Sends the current request's bytes to shard `shard` over this client's shared connection
  // (a replica's, for a read-only command when read_from allows).
  virtual void forward(std::size_t shard, std::string_view request_bytes) = 0;
  // Sends the current request's bytes down `connection` within its time limit: a script's
  // (timeouts.script_ms) or every other request's (timeouts.request_ms).
  virtual void send_current(BackendConnection& connection, std::string_view request_bytes,
                            ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment) = 0;
  // The connection that carries the current request to `shard`, of the plan's kind
  // (Plan::connection): the primary's, a replica's (read_from) or a tracking lane's.
  virtual BackendConnection& backend(std::size_t shard) = 0;
  // This client's connection to `shard`'s primary, whatever the request: its tracking lane
  // (CLIENT TRACKING on), else the shared one.
  virtual BackendConnection& shared_backend(std::size_t shard) = 0;
  // After the current reply is written, close the connection (QUIT, protocol errors).
  virtual void close_after_replies() = 0;

  // --- moves ---
  // The pull of the request being dispatched (router/routes/key_pull.h).
  virtual PullOutcome& pull_outcome() = 0;

 protected:
  // `client` and the roles may be parts of the implementation not built yet: they are only
  // referred to.
  RequestContext(WorkerServices& worker, ClientState& client, HeldAcrossRequests& held,
                 ClientCaching& caching, PushChannel& pushes, ClientLink& link)
      : worker_(worker),
        client_(client),
        held_(held),
        caching_(caching),
        pushes_(pushes),
        link_(link) {}

  // open_slot's bookkeeping (last_slot, opened_slots).
  void slot_opened(std::uint64_t slot) {
    last_slot_ = slot;
    ++opened_slots_;
  }

  WorkerServices& worker_;

 private:
  ClientState& client_;
  std::uint64_t last_slot_ = 0;
  std::uint64_t opened_slots_ = 0;
  HeldAcrossRequests& held_;
  ClientCaching& caching_;
  PushChannel& pushes_;
  ClientLink& link_;
};

}  // namespace santral::router
