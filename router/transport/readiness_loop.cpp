#include "router/transport/readiness_loop.h"

#include <sys/epoll.h>
#include <cerrno>

#include <boost/asio/post.hpp>

namespace santral::router {

namespace asio = boost::asio;

namespace {

// Edges taken from the set per epoll_wait; a full batch is followed by another at once.
constexpr int kBatch = 64;

int new_epoll_set() {
  int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0)
    throw boost::system::system_error(errno, boost::system::system_category(), "epoll_create1");
  return fd;
}

}  // namespace

ReadinessLoop& ReadinessLoop::of(asio::io_context& io) {
  return asio::use_service<ReadinessLoop>(io);
}

ReadinessLoop::ReadinessLoop(asio::io_context& io)
    : asio::execution_context::service(io), set_(io, new_epoll_set()) {
  arm();
}

// The io_context goes: its pending wait is dropped with it, and the holds are let go (a
// watcher that goes with its hold may still call forget(), which then finds nothing).
void ReadinessLoop::shutdown() {
  boost::system::error_code ignored;
  set_.close(ignored);
  auto entries = std::move(entries_);
  entries_.clear();
  free_.clear();
  entries.clear();
}

bool ReadinessLoop::watch(int fd, Watcher& watcher, std::shared_ptr<void> hold, Token& token,
                          boost::system::error_code& ec) {
  std::uint32_t index = 0;
  if (free_.empty()) {
    index = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  } else {
    index = free_.back();
    free_.pop_back();
  }
  auto& entry = entries_[index];
  token = (static_cast<std::uint64_t>(entry.generation) << 32) | index;
  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  event.data.u64 = token;
  if (::epoll_ctl(set_.native_handle(), EPOLL_CTL_ADD, fd, &event) != 0) {
    ec.assign(errno, boost::system::system_category());
    ++entry.generation;
    free_.push_back(index);
    return false;
  }
  entry.watcher = &watcher;
  entry.hold = std::move(hold);
  return true;
}

void ReadinessLoop::forget(Token token, int fd) {
  auto index = static_cast<std::uint32_t>(token);
  if (index >= entries_.size() || entries_[index].generation != token >> 32) return;
  if (fd >= 0) ::epoll_ctl(set_.native_handle(), EPOLL_CTL_DEL, fd, nullptr);
  auto& entry = entries_[index];
  entry.watcher = nullptr;
  ++entry.generation;
  free_.push_back(index);
  if (entry.hold) asio::post(set_.get_executor(), [hold = std::move(entry.hold)] {});
}

void ReadinessLoop::arm() {
  set_.async_wait(asio::posix::stream_descriptor::wait_read,
                  [this](const boost::system::error_code& ec) { on_wake(ec); });
}

void ReadinessLoop::on_wake(const boost::system::error_code& ec) {
  if (ec) return;  // the worker stops
  epoll_event events[kBatch];
  int ready = 0;
  do {
    ready = ::epoll_wait(set_.native_handle(), events, kBatch, 0);
    for (int i = 0; i < ready; ++i) {
      auto token = events[i].data.u64;
      auto index = static_cast<std::uint32_t>(token);
      if (index >= entries_.size()) continue;
      const auto& entry = entries_[index];
      if (entry.watcher != nullptr && entry.generation == token >> 32)
        entry.watcher->on_ready(events[i].events);
    }
  } while (ready == kBatch || (ready < 0 && errno == EINTR));
  arm();
}

}  // namespace santral::router
