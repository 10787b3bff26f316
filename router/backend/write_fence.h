#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace santral::router {

// In a fleet (router/cluster/), a router that has not confirmed its lease lately may have been
// left out of a move: it writes nothing more to any shard. Requests are refused when they are
// planned (SharedState::fleet_serve_until_ns), and checked here again before each write system
// call of their connection: a request planned before the router was frozen (SIGSTOP) must not
// reach its shard after it wakes. `serve_until_ns` (lease_clock.h ns) outlives every connection;
// nullptr (alone): no fence.
void set_write_fence(const std::atomic<std::int64_t>* serve_until_ns);
// How many ms past the fence this router is now; 0 while it may write.
std::int64_t write_fence_late_ms();

// One shard connection's side of the fence: checked before each write system call, and, while
// it is up, a connection it closed waits for it to lift instead of connecting again at once
// (the handshake would be fenced again, thousands of times a second). The connection that
// sends the proofs of others (draining_connections.h) is not fenced: a CLIENT KILL ID of this
// router's own connection writes no data, and a rejoining router waits for those proofs.
class ConnectionFence {
 public:
  explicit ConnectionFence(bool fenced = true) : fenced_(fenced) {}
  void set_fenced(bool fenced) { fenced_ = fenced; }

  // How many ms past the fence this connection is now; 0 while it may write.
  std::int64_t late_ms() const { return fenced_ ? write_fence_late_ms() : 0; }
  // Why a write was held back, `late` ms past the fence.
  static std::string why(std::int64_t late);
  // The connection failed: true when it is to wait for the fence to lift.
  bool wait() {
    if (late_ms() <= 0) return false;
    return waiting_ = true;
  }
  // A request came for a connection that waited: true when the fence has lifted since (it
  // connects at once, not on its retry timer).
  bool lifted();
  void connecting() { waiting_ = false; }
  bool waiting() const { return waiting_; }

 private:
  bool fenced_;
  bool waiting_ = false;
};

}  // namespace santral::router
