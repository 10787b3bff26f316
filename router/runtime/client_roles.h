#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/errors.h"

namespace santral::router {

class BackendConnection;
class Transaction;
class Subscriptions;
class TrackedReads;
class WriteCoherence;
struct BlockedCall;

// The client-level half of what a route may reach, beside the request it handles
// (router/runtime/request_context.h): each a role of the client that sent it, reached as
// `client.held()`, `client.caching()`, `client.pushes()` and `client.link()`. Implemented
// by Client (router/session/client.h) and by the unit tests' fake
// (tests/support/fake_request_context.h). Nothing is deleted through a role (protected
// destructors).

// The stateful commands the client has open across its requests: a transaction (MULTI),
// subscriptions (SUBSCRIBE) and blocking calls (BLPOP and the like).
class HeldAcrossRequests {
 public:
  virtual Transaction& transaction() = 0;
  virtual bool in_transaction() const = 0;
  // Its last EXEC or DISCARD is not answered yet (Transaction::ended_in_flight).
  virtual bool transaction_ending() const = 0;
  virtual Subscriptions& subscriptions() = 0;
  virtual bool subscribed() const = 0;
  // A blocking command of this client waiting on its own lent connection.
  virtual void blocked(BlockedCall call) = 0;
  // The blocking command on `connection` got its reply: the connection goes back to the pool.
  virtual void unblocked(const BackendConnection* connection) = 0;
  // Whether the blocked call on `connection` is being ended by a move's switch.
  virtual bool call_ended_by_move(const BackendConnection* connection) const = 0;
  // CLIENT UNBLOCK: ends this client's blocking commands as if they timed out (or with an
  // error); true when it had one.
  virtual bool unblock(bool with_error,
                       protocol::ClientError error = protocol::ClientError::Unblocked) = 0;

 protected:
  ~HeldAcrossRequests() = default;
};

// Client-side caching (CLIENT TRACKING) and the near cache, as they follow this client's
// reads and writes.
class ClientCaching {
 public:
  // The reads of this client whose replies will register it for their keys.
  virtual TrackedReads& tracked_reads() = 0;
  // This client's writes and fills as the near cache must see them.
  virtual WriteCoherence& coherence() = 0;
  // Every write this client sent has been answered (its later reads may use the near cache).
  virtual bool writes_answered() const = 0;

 protected:
  ~ClientCaching() = default;
};

// What reaches the client unasked, passed on in order with its replies.
class PushChannel {
 public:
  // A pub/sub message (or anything else unasked for).
  virtual void push(std::string_view frame) = 0;
  // Tells this client (RESP3 push, or its redirect target) that a key it read changed.
  virtual void invalidate(std::string_view push_frame) = 0;
  // Another client's invalidation redirected here (its keys part).
  virtual void redirected_invalidation(std::string_view keys) = 0;
  // The client this one's invalidations are redirected to is gone.
  virtual void redirect_gone(std::uint64_t target) = 0;

 protected:
  ~PushChannel() = default;
};

// The client's connection itself.
class ClientLink {
 public:
  // Owes no reply.
  virtual bool idle() const = 0;
  // CLIENT LIST / CLIENT INFO line for this client.
  virtual std::string describe() = 0;
  // Closes the connection now (CLIENT KILL).
  virtual void close() = 0;
  virtual bool closed() const = 0;

 protected:
  ~ClientLink() = default;
};

}  // namespace santral::router
