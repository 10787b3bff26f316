#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/container/devector.hpp>

namespace santral::router {

class NearCache;

// One client's side of near-cache coherence: its writes whose replies have not reached it yet
// and its fills in flight. A write through Santral evicts its keys at once (dispatch) and, with
// this, again when its reply reaches the client: a fill may have read the old value on the
// tracking connection just before the write ran, and Redis's invalidation of it still be
// unread. Reply slots are the client's ReplyQueue ids.
class WriteCoherence {
 public:
  // A key the current write changes (or, `all`, every key: FLUSHALL): evicted again once the
  // write's reply has left.
  void forget_when_answered(std::string_view key, bool all = false);
  // The current request opened `slot`; `write` when it is not read-only.
  void opened(std::uint64_t slot, bool write, bool answers_writes);
  // Evicts the keys of writes whose replies have left (those before `head`, the oldest slot
  // still queued); `now` also those of the write answered this moment, which had no slot.
  void forget_answered(std::uint64_t head, bool now, NearCache& cache);
  bool pending() const { return !written_keys_.empty(); }
  // Every write of this client has been answered when the oldest queued slot is past the last
  // write (its later reads may use the near cache).
  bool writes_answered(bool idle, std::uint64_t head) const {
    return idle || head >= after_last_write_;
  }

  // Near-cache fills of this client in flight on tracking connections: a later write must wait
  // for them, or it could overtake them on its own connection.
  void fill_started() { ++fills_in_flight_; }
  void fill_finished() { --fills_in_flight_; }
  std::uint32_t fills_in_flight() const { return fills_in_flight_; }

  void clear() { written_keys_.clear(); }

 private:
  // Keys of writes whose replies have not reached the client, by reply slot (kNoSlot: the
  // write has not opened its slot yet, e.g. queued in MULTI until EXEC); slots ascending.
  struct WrittenKey {
    static constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};
    std::uint64_t slot = kNoSlot;
    std::string key;
    bool all = false;
  };
  // A devector: a client that never writes through the near cache allocates nothing.
  boost::container::devector<WrittenKey> written_keys_;
  std::uint64_t after_last_write_ = 0;  // the first reply slot after this client's last write
  std::uint32_t fills_in_flight_ = 0;
};

}  // namespace santral::router
