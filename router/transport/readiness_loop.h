#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/system/error_code.hpp>

namespace santral::router {

// An io_context's own readiness loop for its plain client sockets (TLS ones stay on Asio's
// streams; shard connections too, docs/benchmarks.md says why): one epoll set, each socket
// registered once, edge-triggered, for reading and writing, and never changed after. The set itself
// waits in the io_context as one descriptor, so a wake-up costs Asio's epoll_wait, the set's
// epoll_wait and one epoll_ctl that re-arms it, however many sockets are ready; a socket costs only
// its own reads and writes. Asio's reactor would instead read once more after every request until a
// read fails with EAGAIN (it marks a socket drained only then), or re-arm a socket's own wait with
// an epoll_ctl each time.
//
// What a watcher is told is an edge: bytes arrived, or room to write appeared. It reads until a
// short read (which means drained) and writes until a short write (which means full); until the
// next edge there is nothing more to find.
class ReadinessLoop final : public boost::asio::execution_context::service {
 public:
  class Watcher {
   public:
    // `events`: EPOLLIN, EPOLLOUT, EPOLLRDHUP, EPOLLHUP, EPOLLERR as epoll reported them.
    virtual void on_ready(std::uint32_t events) = 0;

   protected:
    ~Watcher() = default;
  };

  static inline boost::asio::execution_context::id id;
  // The loop of `io`, made at its first use (an Asio service: it lives as long as `io`).
  static ReadinessLoop& of(boost::asio::io_context& io);
  explicit ReadinessLoop(boost::asio::io_context& io);
  ReadinessLoop(const ReadinessLoop&) = delete;
  ReadinessLoop& operator=(const ReadinessLoop&) = delete;

  // Watches `fd` (a connected stream socket) for `watcher` until forget(token), keeping `hold`
  // (what keeps the watcher alive) as long; false: epoll refused it (errno in `ec`).
  using Token = std::uint64_t;
  bool watch(int fd, Watcher& watcher, std::shared_ptr<void> hold, Token& token,
             boost::system::error_code& ec);
  // The watcher hears nothing more, even of edges already collected in this wake-up; its hold
  // is let go after the current handler (the watcher may be inside its own last call). The
  // socket leaves the set when it is closed; `fd`: one that stays open, taken out now.
  void forget(Token token, int fd = -1);

 private:
  struct Entry {
    Watcher* watcher = nullptr;
    std::shared_ptr<void> hold;
    std::uint32_t generation = 0;  // tells a forgotten entry's late edges from its successor's
  };

  void shutdown() override;
  void arm();
  void on_wake(const boost::system::error_code& ec);

  boost::asio::posix::stream_descriptor set_;  // owns the epoll descriptor
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
};

}  // namespace santral::router
