#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace santral::router {

// The keys each BCAST NOLOOP client of a worker is writing, whose broadcast invalidation is
// not to reach it (Redis does not tell a NOLOOP client of its own writes). The broadcast
// connections hear every writer's keys alike. A write of a key is the client's own from the
// time it is sent until the first push naming that key reaches the broadcast connections
// (that push is the write's own, skipped), or, for a write that changed nothing and is pushed
// by nobody, until a PING on every broadcast connection, sent once the write's reply arrived,
// is answered: Redis wrote any push of the write before it read that PING.
//
//   client: SET k ──► lane ──► Redis            own: k
//                     reply ◄──┤ push "k" ───► broadcast connections: k was the client's own:
//                              │                skipped, and k is no longer its own
//                              ├ push "k" ───► (another client's SET k): told
//   reply read: PING ─────────────────────────► broadcast connections
//                                   +PONG ◄──── the write's barrier is over
//
// Another client's write of k that Redis ran between this write's sending and its running is
// taken for the client's own (skipped); the client's own push is then told instead. Neither
// loses an invalidation the client needs: its own write came last. One gap is left: Redis
// names a key once per event loop in its BCAST pushes, so another client's write of the key in
// the same event loop of the shard as this write (within a millisecond) is not told; Redis,
// which knows both writers, tells it.
class OwnWrites {
 public:
  void writing(std::uint64_t client, std::span<const std::string> keys);
  // A push named `key` on a broadcast connection: true when it is the client's own write's
  // (that write is then over: the next push of the key is someone else's).
  bool take(std::uint64_t client, std::string_view key);
  // The write's PINGs are answered: a write of these keys that no push ended is over. A
  // generation that is not current() is a barrier from before clear(): nothing to undo.
  void heard(std::uint64_t client, std::span<const std::string> keys, std::uint64_t generation);
  bool own(std::uint64_t client, std::string_view key) const;
  void forget(std::uint64_t client) { writes_.erase(client); }
  // A broadcast connection was lost or replaced: its clients are told to flush everything.
  void clear() {
    writes_.clear();
    ++generation_;
  }
  std::uint64_t generation() const { return generation_; }
  bool empty() const { return writes_.empty(); }

 private:
  struct Writes {
    unsigned open =
        0;  // sent, neither pushed nor past its barrier yet: the key is the client's own
    unsigned pushed = 0;  // ended by their push, their barrier still to come
  };
  std::unordered_map<std::uint64_t, std::unordered_map<std::string, Writes>> writes_;
  std::uint64_t generation_ = 0;
};

}  // namespace santral::router
