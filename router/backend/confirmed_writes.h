#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "router/backend/reply_sink.h"
#include "router/backend/write_concern.h"
#include "router/metrics/stats.h"

namespace santral::router {

// Write concern (config::WriteConcern) on one shard connection: behind each batch of writes
// one `WAIT <replicas> <timeout_ms>` goes down the same connection (the most any write of the
// batch asked for); the writes' replies are held until it answers, then delivered as they
// came, or replaced by a NOREPLICAS error when fewer replicas confirmed. Replies to other
// requests are not held (a request queued behind the WAIT waits for it on the shard, as Redis
// runs one connection's commands in order).
//
//   send(SET) send(GET) send(SET) | flush: WAIT 2 100 | replies: +OK  $v  +OK  :1
//      held        delivered     held                        -> NOREPLICAS, NOREPLICAS
class ConfirmedWrites {
 public:
  // `on`: the config confirms writes and the connection is one that serves clients' writes.
  explicit ConfirmedWrites(bool on = false) : on_(on) {}
  void set_on(bool on) { on_ = on; }

  // A request about to be sent, which asked for `wanted`. True: its reply is to be held
  // (answered()) for the WAIT behind it.
  bool sent(std::string_view request, const config::WriteConcern& wanted);
  // A request whose reply nobody hears (the MULTI of a pinned transaction): it still opens or
  // ends a transaction.
  void sent_silent(std::string_view request);
  // The WAIT to send now behind the writes sent since the last one, if any (none inside a
  // transaction: EXEC is confirmed as one write).
  std::optional<config::WriteConcern> wait_due();

  // A held write's reply came.
  void answered(ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment,
                std::string_view frame, const config::WriteConcern& wanted);
  // WAIT's answer: how many replicas confirmed the writes before it. Each held reply is
  // delivered, or, short of the count its write asked for, replaced by NOREPLICAS (the write
  // ran on the primary). `shard`, `address`: for the message.
  void confirmed(std::string_view frame, std::string_view shard, std::string_view address,
                 ShardStats& stats);
  // The connection failed: the writes that ran but whose WAIT never answered fail with
  // `reply` (their outcome is as unknown as the rest's), and the next connection starts anew.
  void fail(const std::string& reply, ShardStats& stats);

  std::size_t held() const { return awaiting_.size(); }

 private:
  struct HeldReply {
    ReplySinkPtr sink;
    std::uint64_t slot;
    std::uint32_t fragment;
    std::string frame;
    config::WriteConcern concern;  // what the write asked for
  };

  bool on_;
  WriteConcernTracker writes_;
  bool unconfirmed_ = false;                                     // sent since the last WAIT
  config::WriteConcern batch_{0, std::chrono::milliseconds(0)};  // the WAIT for them
  std::vector<HeldReply> awaiting_;  // answered writes waiting for their WAIT
};

}  // namespace santral::router
