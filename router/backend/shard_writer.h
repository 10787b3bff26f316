#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

#include "router/backend/write_fence.h"
#include "router/transport/stream.h"

namespace santral::router {

// How a shard connection's requests reach its socket. What is queued in one event-loop turn
// goes out at its end in one batch, in bounded write system calls, each checked against the
// fleet's write fence first (ConnectionFence): the rest of a batch partly written when a router
// froze must not reach the shard after it wakes past its lease.
//
// On a plain socket each write is the writer's own non-blocking call, made after the check; a
// full socket is waited for (wait_write), never handed to the reactor to write later. A TLS
// record is written by asio's TLS stream, which may write it once the socket takes it.
class ShardWriter {
 public:
  // The connection the writer is part of. The writer's handlers hold it (hold(), let_go()) as
  // long as they are pending, and are dropped by reset() when its socket closes.
  class Owner {
   public:
    virtual void hold() = 0;
    virtual void let_go() = 0;
    // Up: its requests may be written.
    virtual bool writable() const = 0;
    // The batch in writing is out: a last chance to queue behind it (a WAIT).
    virtual void top_up() = 0;
    // Just before a write system call.
    virtual void writing() = 0;
    // A write failed, or the fence held it back (not a failure of the shard's).
    virtual void write_failed(const std::string& why, bool counts_as_failure) = 0;

   protected:
    ~Owner() = default;
  };

  // One write system call at most this much: the fence is checked between two.
  static constexpr std::size_t kMaxWrite = 256 * 1024;

  ShardWriter(boost::asio::io_context& io, Stream& stream, const ConnectionFence& fence,
              Owner& owner)
      : io_(io), stream_(stream), fence_(fence), owner_(owner) {}
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Queued, not yet handed to the socket.
  std::string& outbox() { return outbox_; }
  // Defers the write to the end of this event-loop turn, so that every request queued by every
  // client in the turn leaves in one write.
  void schedule();
  // Writes what is queued while the owner is writable, until it is all out or the socket is
  // full (the rest follows once it takes more).
  void flush();
  // The socket closed or is opened again: what was being written is dropped, pending handlers
  // do nothing (the outbox stays).
  void reset();

 private:
  class Hold;
  void write_tls(boost::asio::const_buffer chunk);

  boost::asio::io_context& io_;
  Stream& stream_;
  const ConnectionFence& fence_;
  Owner& owner_;
  std::string outbox_;
  std::string writing_;  // handed to the socket, written up to written_
  std::size_t written_ = 0;
  bool write_in_flight_ = false;
  bool flush_posted_ = false;
  std::uint64_t generation_ = 0;  // bumped by reset(); stale handlers compare and bail
};

}  // namespace santral::router
