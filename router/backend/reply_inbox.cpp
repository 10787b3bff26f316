#include "router/backend/reply_inbox.h"

#include <algorithm>

namespace santral::router {

ReplyInbox::ReplyInbox() : bytes_(kInitialBytes) {}

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

void ReplyInbox::shrink() {
  bytes_.resize(kInitialBytes);
  bytes_.shrink_to_fit();
}

void ReplyInbox::reset() {
  start_ = end_ = 0;
  scanner_.reset();
}

}  // namespace santral::router
