#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/devector.hpp>

namespace santral::router {

// One tracking client's reads whose replies are still to come, and the keys each reply
// registers the client for (TrackingLanes::read_arrived) when it is read off its lane; and a
// BCAST NOLOOP client's writes, whose replies start the barrier that ends their keys being its
// own (TrackingLanes::own_write_answered).
class TrackedReads {
 public:
  enum class Awaited { Read, OwnWrite };

  void expect(std::uint64_t slot, std::uint32_t fragment, std::uint64_t epoch,
              std::vector<std::string> keys, Awaited awaited = Awaited::Read) {
    reads_.push_back({slot, fragment, epoch, std::move(keys), awaited});
  }
  bool empty() const { return reads_.empty(); }
  void clear() {
    reads_.clear();
    in_multi_.clear();
  }
  // Reads queued in MULTI run on the transaction's own connection, not a lane: their keys are
  // invalidated after EXEC's reply (the client is told not to keep them).
  void read_in_multi(std::vector<std::string> keys) {
    for (auto& key : keys) in_multi_.push_back(std::move(key));
  }
  std::vector<std::string> take_multi() { return std::exchange(in_multi_, {}); }

  // A PING or ECHO that waited for its lanes' PINGs (lanes_barrier_first): `request` is the
  // number of the request they were sent for (ClientState::requests_dispatched).
  void barrier_for(std::uint64_t request) { barrier_ = request + 1; }
  bool barrier_passed(std::uint64_t request) const { return barrier_ == request + 1; }

  // The reply to fragment `fragment` of slot `slot` arrived: `each(key, epoch)` for the keys
  // of a read, `written(keys)` for those of an own write.
  template <typename Each, typename Written>
  void arrived(std::uint64_t slot, std::uint32_t fragment, Each&& each, Written&& written) {
    for (auto read = reads_.begin(); read != reads_.end(); ++read) {
      if (read->slot != slot || read->fragment != fragment) continue;
      Read done = std::move(*read);
      reads_.erase(read);
      if (done.awaited == Awaited::OwnWrite) return written(std::move(done.keys));
      for (const auto& key : done.keys) each(key, done.epoch);
      return;
    }
  }

 private:
  struct Read {
    std::uint64_t slot;
    std::uint32_t fragment;
    std::uint64_t epoch;
    std::vector<std::string> keys;
    Awaited awaited;
  };
  boost::container::devector<Read> reads_;  // allocates nothing until the first read
  std::vector<std::string> in_multi_;
  std::uint64_t barrier_ = 0;  // the number + 1 of the request its barrier is for; 0: none
};

}  // namespace santral::router
