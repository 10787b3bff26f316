#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

namespace santral::router {

// Where the time of one request's part went on a shard's connection (SLOWLOG's measure).
struct ShardTiming {
  std::size_t shard = 0;
  // Held before it could be sent: the shard was down and a failover was awaited
  // (failover.wait_ms).
  std::chrono::steady_clock::duration held{};
  // From the moment it was queued to the shard to the moment its reply (or its error) came.
  std::chrono::steady_clock::duration waited{};
};

// Where a backend delivers the reply to a request it was sent. A client is one; it
// stays alive while any backend still owes it a reply (everything of one worker runs on one
// thread, so the count needs no atomics).
class ReplySink : public boost::intrusive_ref_counter<ReplySink, boost::thread_unsafe_counter> {
 public:
  virtual ~ReplySink() = default;
  // `reply` is one whole RESP frame, valid only during the call.
  virtual void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) = 0;
  // Just before the reply of (`slot`, `fragment`) is delivered: which shard it comes from and
  // where its time went there. Kept only by the sinks that measure (a client, for SLOWLOG).
  virtual void timed(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
                     const ShardTiming& /*timing*/) {}
  // A connection this sink depends on for more than single replies (its pub/sub connection)
  // was lost.
  virtual void connection_lost(std::size_t /*shard*/) {}
};

using ReplySinkPtr = boost::intrusive_ptr<ReplySink>;

}  // namespace santral::router
