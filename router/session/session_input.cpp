#include "router/session/session_input.h"

#include <algorithm>

namespace santral::router {

void SessionInput::make_room() {
  if (end < inbox.size()) return;
  if (start == 0) return inbox.resize(inbox.size() * 2);
  std::copy(inbox.begin() + static_cast<std::ptrdiff_t>(start),
            inbox.begin() + static_cast<std::ptrdiff_t>(end), inbox.begin());
  end -= start;
  start = 0;
}

void SessionInput::rewind() {
  start = end = 0;
  if (inbox.size() <= InputPool::kKeepBytes) return;
  inbox.resize(InputPool::kInboxBytes);
  inbox.shrink_to_fit();
}

std::unique_ptr<SessionInput> InputPool::take(const protocol::RequestLimits& limits) {
  if (spares_.empty()) {
    auto input = std::make_unique<SessionInput>(limits);
    input->inbox.resize(kInboxBytes);
    return input;
  }
  auto input = std::move(spares_.back());
  spares_.pop_back();
  input->parser.set_limits(limits);  // a reload may have changed them
  return input;
}

void InputPool::give_back(std::unique_ptr<SessionInput> input) {
  if (!input || spares_.size() >= kMaxSpares) return;
  input->start = input->end = 0;
  input->parser.reset();
  input->active.done();
  if (input->inbox.size() > kKeepBytes) {
    input->inbox.resize(kInboxBytes);
    input->inbox.shrink_to_fit();
  }
  if (input->active.scratch.capacity() > kKeepBytes) std::string().swap(input->active.scratch);
  spares_.push_back(std::move(input));
}

}  // namespace santral::router
