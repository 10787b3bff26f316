#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace santral::router {

// The keys each BCAST NOLOOP client of a worker is writing, whose broadcast invalidation is
// not to reach it (Redis does not tell a NOLOOP client of its own writes). The broadcast
// connections hear every writer's keys alike, so a key counts as the client's own from the time
// its write is sent until a PING on every broadcast connection, sent once the write's reply
// arrived, is answered: Redis wrote the write's push before it read that PING.
//
//   client: SET k ──► lane ──► Redis            own: k
//                     reply ◄──┤ push "k" ───► broadcast connections: k is the client's own,
//                     skipped
//   reply read: PING ─────────────────────────► broadcast connections
//                                   +PONG ◄──── own: (none)
//
// A write by another client of the same key inside that window is not told to this client
// either (Redis, which sees every writer, tells it); the window is one round trip.
class OwnWrites {
 public:
  void writing(std::uint64_t client, std::span<const std::string> keys);
  // The write's PINGs are answered: its keys are no longer the client's own. A generation
  // that is not current() is a fence from before clear(): nothing to undo.
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
  std::unordered_map<std::uint64_t, std::unordered_map<std::string, unsigned>> writes_;
  std::uint64_t generation_ = 0;
};

}  // namespace santral::router
