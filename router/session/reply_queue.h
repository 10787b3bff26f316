#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/container/devector.hpp>

#include "protocol/command_table.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp2_reply.h"
#include "router/merge/reply_merge.h"
#include "router/runtime/slow_log.h"

namespace santral::router {

struct CommandStats;

// One client's replies in request order. Each request takes a slot at the tail; replies fill
// slots in any order; only the head may leave, so the client sees replies in the order it sent
// the requests even when shards answer out of order.
//
//   requests:   GET a (shard0)   GET b (shard2)   GET c (shard0)
//   slots:      [7: waiting]     [8: "$1 b"]      [9: waiting]     <- shard2 answered first
//   shard0 answers a -> slot 7 ready -> 7 and 8 leave, 9 stays at the head
// What a reply slot was opened for, reported when its reply leaves (for per-command
// statistics).
struct SlotRequest {
  const protocol::CommandSpec* command = nullptr;
  std::chrono::steady_clock::time_point start;
  CommandStats* stats = nullptr;  // the worker's counters of `command`, found once per request
  // A RESP2 client's request sent over a RESP3 tracking lane: its replies are rewritten in
  // this shape before they are queued (protocol/resp2_reply.h).
  std::optional<protocol::Resp2Shape> resp2;
  // Where its time went, for SLOWLOG: filled while `slowlog:` is on.
  SlowTrace trace;
};

class ReplyQueue {
 public:
  using Request = SlotRequest;

  // Opens a slot at the tail for a request of `fragments` parts (1 unless split or
  // broadcast); `merge` combines the parts and must be set when fragments > 1.
  std::uint64_t open(std::uint32_t fragments = 1, std::unique_ptr<ReplyMerge> merge = nullptr,
                     Request request = {});

  // A part of the reply for `slot` arrived. Returns true when the slot became complete.
  bool fill(std::uint64_t slot, std::uint32_t fragment, std::string_view reply);
  // The whole reply for `slot`, known at once (a local answer or an error).
  void complete(std::uint64_t slot, std::string_view reply);
  // The client must not see the reply of `slot` (CLIENT REPLY OFF/SKIP).
  void silence(std::uint64_t slot);

  // Moves the replies of complete slots at the head to `out`, in order, calling
  // left(request, is_error) for each.
  template <typename Left>
  void drain(std::string& out, Left&& left) {
    while (!slots_.empty() && slots_.front().ready) {
      Slot& slot = slots_.front();
      if (!slot.silent) out.append(slot.reply);
      left(slot.request, protocol::is_error_frame(slot.reply));
      pop_head();
    }
  }

  bool empty() const { return slots_.empty(); }
  std::size_t size() const { return slots_.size(); }
  // The id of the oldest slot still queued (the next one opened, when empty).
  std::uint64_t head_id() const { return head_; }
  // True when `slot` is the head and only waits for one reply: its reply may go straight to
  // the client's output, skipping the slot's buffer (the common, in-order case).
  bool is_simple_head(std::uint64_t slot) const;
  const Request& head_request() const { return slots_.front().request; }
  // The request `slot` was opened for, or nullptr when it is not queued.
  const Request* request(std::uint64_t slot) const {
    if (slot < head_ || slot - head_ >= slots_.size()) return nullptr;
    return &slots_[slot - head_].request;
  }
  Request* request(std::uint64_t slot) {
    if (slot < head_ || slot - head_ >= slots_.size()) return nullptr;
    return &slots_[slot - head_].request;
  }
  // Removes the head slot whose reply was written directly to the output.
  void pop_head();

 private:
  struct Slot {
    std::string reply;
    std::unique_ptr<ReplyMerge> merge;
    Request request;
    std::uint32_t fragments_left = 1;
    bool ready = false;
    bool silent = false;
  };
  Slot* find(std::uint64_t slot);

  // A devector, not a deque: it allocates nothing while empty (an idle client holds no
  // buffer) and reuses its buffer as slots come and go.
  boost::container::devector<Slot> slots_;
  std::uint64_t head_ = 0;  // id of slots_.front()
};

}  // namespace santral::router
