#include "router/backend/shard_writer.h"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

namespace santral::router {

namespace asio = boost::asio;

// A pending handler's hold on the writer's owner (its connection stays alive until it runs).
class ShardWriter::Hold {
 public:
  explicit Hold(Owner& owner) : owner_(&owner) { owner_->hold(); }
  Hold(Hold&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  Hold& operator=(Hold&&) = delete;
  ~Hold() {
    if (owner_) owner_->let_go();
  }

 private:
  Owner* owner_;
};

void ShardWriter::schedule() {
  if (flush_posted_ || write_in_flight_) return;
  flush_posted_ = true;
  asio::post(io_, [this, hold = Hold(owner_), generation = generation_] {
    if (generation != generation_) return;
    flush_posted_ = false;
    flush();
  });
}

void ShardWriter::flush() {
  while (!write_in_flight_ && owner_.writable()) {
    if (written_ == writing_.size()) {
      owner_.top_up();
      if (outbox_.empty()) return;
      writing_.clear();
      written_ = 0;
      writing_.swap(outbox_);
    }
    if (auto late = fence_.late_ms(); late > 0)
      return owner_.write_failed(ConnectionFence::why(late), false);
    auto chunk =
        asio::buffer(writing_.data() + written_, std::min(writing_.size() - written_, kMaxWrite));
    owner_.writing();
    if (stream_.tls()) return write_tls(chunk);
    boost::system::error_code ec;
    auto& socket = stream_.socket();
    if (!socket.non_blocking()) socket.non_blocking(true, ec);
    std::size_t bytes = ec ? 0 : socket.write_some(chunk, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      write_in_flight_ = true;
      socket.async_wait(Stream::Socket::wait_write,
                        [this, hold = Hold(owner_),
                         generation = generation_](boost::system::error_code wait_error) {
                          if (generation != generation_) return;
                          write_in_flight_ = false;
                          if (wait_error) return owner_.write_failed(wait_error.message(), true);
                          flush();
                        });
      return;
    }
    if (ec) return owner_.write_failed(ec.message(), true);
    written_ += bytes;
  }
}

void ShardWriter::write_tls(asio::const_buffer chunk) {
  write_in_flight_ = true;
  stream_.async_write_some(chunk, [this, hold = Hold(owner_), generation = generation_](
                                      boost::system::error_code ec, std::size_t bytes) {
    if (generation != generation_) return;
    write_in_flight_ = false;
    if (ec) return owner_.write_failed(ec.message(), true);
    written_ += bytes;
    flush();
  });
}

void ShardWriter::reset() {
  ++generation_;
  write_in_flight_ = false;
  writing_.clear();
  written_ = 0;
  flush_posted_ = false;
}

}  // namespace santral::router
