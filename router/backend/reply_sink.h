#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

namespace santral::router {

// Where a backend delivers the reply to a request it was sent. A client session is one; it
// stays alive while any backend still owes it a reply (everything of one worker runs on one
// thread, so the count needs no atomics).
class ReplySink : public boost::intrusive_ref_counter<ReplySink, boost::thread_unsafe_counter> {
 public:
  virtual ~ReplySink() = default;
  // `reply` is one whole RESP frame, valid only during the call.
  virtual void deliver(std::uint64_t slot, std::uint32_t fragment, std::string_view reply) = 0;
  // A connection this sink depends on for more than single replies (its pub/sub connection)
  // was lost.
  virtual void connection_lost(std::size_t /*shard*/) {}
};

using ReplySinkPtr = boost::intrusive_ptr<ReplySink>;

}  // namespace santral::router
