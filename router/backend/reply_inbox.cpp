#include "router/backend/reply_inbox.h"

#include <algorithm>

namespace santral::router {

namespace {
constexpr std::size_t kInitial = 16 * 1024;
}

ReplyInbox::ReplyInbox() : bytes_(kInitial) {}

boost::asio::mutable_buffer ReplyInbox::room() {
  if (end_ == bytes_.size()) {
    if (start_ > 0) {
      // Keep the unfinished reply, drop what was delivered; the scanner counts from the
      // reply's start, so moving it is safe.
      std::copy(bytes_.begin() + static_cast<std::ptrdiff_t>(start_),
                bytes_.begin() + static_cast<std::ptrdiff_t>(end_), bytes_.begin());
      end_ -= start_;
      start_ = 0;
    } else {
      bytes_.resize(bytes_.size() * 2);
    }
  }
  return boost::asio::buffer(bytes_.data() + end_, bytes_.size() - end_);
}

protocol::ScanStatus ReplyInbox::scan(std::string_view& frame, std::size_t& size) {
  size = 0;
  std::string_view input(bytes_.data() + start_, end_ - start_);
  auto status = scanner_.scan(input, size);
  frame = input.substr(0, std::min(size, input.size()));
  return status;
}

void ReplyInbox::settle() {
  if (start_ != end_) return;
  start_ = end_ = 0;
  if (bytes_.size() > 4 * kInitial) {
    bytes_.resize(kInitial);
    bytes_.shrink_to_fit();
  }
}

void ReplyInbox::reset() {
  start_ = end_ = 0;
  scanner_.reset();
}

}  // namespace santral::router
