#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "router/backend/backend_connection.h"
#include "router/routes/routing.h"

namespace santral::router {

class RequestContext;

// One client's MULTI/EXEC. A transaction runs on one shard, on a connection lent to the
// client from the worker's pool for the transaction's life (WATCH .. EXEC/DISCARD/UNWATCH):
//
//   WATCH k       -> lends a connection to k's shard, WATCH k there
//   MULTI         -> +OK here (or MULTI there, if WATCH already chose the shard)
//   SET k v       -> the first key chooses the shard: MULTI, then SET there (+QUEUED)
//   INCR other    -> other's shard differs: CROSSSLOT, and the transaction is marked failed
//   EXEC          -> EXECABORT if marked failed (DISCARD there), else EXEC there; the
//                    connection goes back to the pool, clean
//
// A command that cannot run on that one shard (a broadcast, a local command) is refused when
// it is queued, as Redis Cluster refuses cross-slot ones, and EXEC answers EXECABORT. A
// transaction of keyless commands may hold FLUSHDB, FLUSHALL and the like (OK from every shard):
// it then runs on every shard, each shard's part atomic, and EXEC answers what they all
// answered (router/merge: Same); a key or WATCH in it is refused.
class Transaction {
 public:
  bool in_multi() const { return in_multi_; }
  int queued() const { return in_multi_ ? queued_ : -1; }
  // WATCH or MULTI has a connection lent for the transaction.
  bool holds_connection() const { return connection_ != nullptr; }
  // EXEC (or DISCARD) went out on the connection it gave back: until its reply is in, the
  // client's next request must not overtake it on another connection (dispatch holds it).
  bool ended_in_flight() const { return ended_in_flight_; }
  void ended_answered() { ended_in_flight_ = false; }

  void watch(const Routed& routed);
  void unwatch(const Routed& routed);
  void multi(const Routed& routed);
  void exec(const Routed& routed);
  void discard(const Routed& routed);
  // Any other command while inside MULTI.
  void queue(const Routed& routed);
  // The client left or sent RESET: a lent connection may still be inside MULTI or WATCH, so
  // it is closed rather than reused.
  void abandon(RequestContext& client);
  // A move changed where keys live: the shard's connection, with its WATCH and queued
  // commands, is closed. EXEC then answers EXECABORT (inside MULTI) or, after WATCH alone, a
  // null reply as when a watched key changed; either way nothing ran, and the client retries.
  void map_changed(RequestContext& client);
  // Answers a command that cannot be queued with `message`; EXEC will answer EXECABORT.
  void refuse(RequestContext& client, std::string_view message);
  // EXEC refused before it could run (this router is out of touch with its fleet): as Redis
  // does, the transaction ends with EXECABORT naming why; nothing of it ran.
  void refuse_exec(RequestContext& client, std::string_view message);

 private:
  void send_queued(const Routed& routed);
  void exec_everywhere(const Routed& routed);
  // MULTI, then the keyless commands queued before the shard was chosen, down connection_.
  void send_deferred();
  bool pin(RequestContext& client, std::size_t shard);
  void give_back(RequestContext& client);
  void reset();

  bool in_multi_ = false;
  bool failed_ = false;      // an error while queueing: EXEC must answer EXECABORT
  bool multi_sent_ = false;  // the shard has seen MULTI
  bool watch_lost_ = false;  // map_changed() closed the connection holding a WATCH
  bool ended_in_flight_ = false;
  bool scripted_ = false;    // a script is queued: EXEC has timeouts.script_ms
  bool everywhere_ = false;  // FLUSHDB or the like is queued: EXEC runs on every shard
  int queued_ = 0;
  std::vector<std::string> deferred_;  // keyless commands queued before a key chose the shard
  // The pinned shard, by name: a reload may renumber shards, and Sentinel may give it a new
  // primary (then connection_ has failed, and so does what is sent down it).
  std::string shard_name_;
  BackendConnectionPtr connection_;
};

}  // namespace santral::router
