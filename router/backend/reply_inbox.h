#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/buffer.hpp>

#include "protocol/reply_scanner.h"

namespace santral::router {

// What a shard connection has read and not yet delivered: reads land at the end, complete
// replies are taken from the front. It grows for a reply larger than its room, and shrinks
// back once it is empty.
class ReplyInbox {
 public:
  ReplyInbox();

  // Room for the next read: the unfinished reply is moved to the front, or the room doubled.
  boost::asio::mutable_buffer room();
  void received(std::size_t bytes) { end_ += bytes; }

  // The reply at the front: Complete (then `frame` is it, `size` its length), NeedMore, or
  // Error (not RESP). It stays at the front until consume(size).
  protocol::ScanStatus scan(std::string_view& frame, std::size_t& size) {
    size = 0;
    std::string_view input(bytes_.data() + start_, end_ - start_);
    auto status = scanner_.scan(input, size);
    frame = input.substr(0, std::min(size, input.size()));
    return status;
  }
  void consume(std::size_t size) { start_ += size; }
  bool empty() const { return start_ == end_; }
  // Everything delivered: back to the start, and to the initial size if it grew large.
  void settle() {
    if (start_ != end_) return;
    start_ = end_ = 0;
    if (bytes_.size() > 4 * kInitialBytes) shrink();
  }
  // A new connection: nothing read yet.
  void reset();
  // Read and not delivered (handed over with a socket that drains).
  std::string unread() const { return std::string(bytes_.data() + start_, end_ - start_); }

 private:
  static constexpr std::size_t kInitialBytes = 16 * 1024;
  void shrink();

  std::vector<char> bytes_;
  std::size_t start_ = 0;  // first byte of the reply being scanned
  std::size_t end_ = 0;
  protocol::ReplyScanner scanner_;
};

}  // namespace santral::router
