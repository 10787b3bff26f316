// The worker's readiness loop on socket pairs: one edge per arrival, each to its own watcher,
// none to a watcher forgotten in the same wake-up or to a later watcher of the same slot.
#include <catch2/catch.hpp>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/transport/readiness_loop.h"

using santral::router::ReadinessLoop;

namespace {

struct SocketPair {
  SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, ends.data()) == 0); }
  ~SocketPair() {
    for (int fd : ends)
      if (fd >= 0) ::close(fd);
  }
  std::array<int, 2> ends{-1, -1};
};

struct Recorder final : ReadinessLoop::Watcher {
  std::vector<std::uint32_t> events;
  std::function<void()> then;
  void on_ready(std::uint32_t ready) override {
    events.push_back(ready);
    if (then) then();
  }
  bool heard(std::uint32_t flag) const {
    for (auto e : events)
      if ((e & flag) != 0) return true;
    return false;
  }
};

// Runs the loop until nothing more is ready (the set's own wait stays armed).
void run_ready(boost::asio::io_context& io) {
  io.restart();
  io.poll();
}

}  // namespace

TEST_CASE("a watched socket hears of bytes once per arrival, not again until more come") {
  boost::asio::io_context io;
  auto& loop = ReadinessLoop::of(io);
  SocketPair pair;
  Recorder recorder;
  ReadinessLoop::Token token = 0;
  boost::system::error_code ec;
  REQUIRE(loop.watch(pair.ends[0], recorder, nullptr, token, ec));
  run_ready(io);  // the first edge: room to write
  CHECK(recorder.heard(EPOLLOUT));
  CHECK_FALSE(recorder.heard(EPOLLIN));
  recorder.events.clear();

  REQUIRE(::write(pair.ends[1], "ping", 4) == 4);
  run_ready(io);
  REQUIRE(recorder.events.size() == 1);
  CHECK(recorder.heard(EPOLLIN));
  recorder.events.clear();
  run_ready(io);  // unread, but no new edge
  CHECK(recorder.events.empty());

  REQUIRE(::write(pair.ends[1], "pong", 4) == 4);
  run_ready(io);
  CHECK(recorder.heard(EPOLLIN));
  recorder.events.clear();
  ::close(std::exchange(pair.ends[1], -1));
  run_ready(io);
  CHECK(recorder.heard(EPOLLRDHUP));
}

TEST_CASE(
    "a watcher forgotten during a wake-up hears nothing more, nor does its slot's old token") {
  boost::asio::io_context io;
  auto& loop = ReadinessLoop::of(io);
  SocketPair first;
  SocketPair second;
  Recorder a;
  Recorder b;
  ReadinessLoop::Token token_a = 0;
  ReadinessLoop::Token token_b = 0;
  boost::system::error_code ec;
  REQUIRE(loop.watch(first.ends[0], a, nullptr, token_a, ec));
  REQUIRE(loop.watch(second.ends[0], b, nullptr, token_b, ec));
  run_ready(io);
  a.events.clear();
  b.events.clear();

  // Whichever hears first forgets the other: the other's edge, already collected, is dropped.
  a.then = [&] { loop.forget(token_b); };
  b.then = [&] { loop.forget(token_a); };
  REQUIRE(::write(first.ends[1], "x", 1) == 1);
  REQUIRE(::write(second.ends[1], "y", 1) == 1);
  run_ready(io);
  CHECK(a.events.size() + b.events.size() == 1);

  // The forgotten slot serves a new watcher; the old token neither reaches it nor forgets it.
  auto forgotten = a.events.empty() ? token_a : token_b;
  auto& kept_pair = a.events.empty() ? second : first;
  auto& forgotten_pair = a.events.empty() ? first : second;
  Recorder c;
  ReadinessLoop::Token token_c = 0;
  SocketPair third;
  REQUIRE(loop.watch(third.ends[0], c, nullptr, token_c, ec));
  CHECK(static_cast<std::uint32_t>(token_c) == static_cast<std::uint32_t>(forgotten));
  CHECK(token_c != forgotten);
  loop.forget(forgotten);
  a.then = nullptr;
  b.then = nullptr;
  a.events.clear();
  b.events.clear();
  run_ready(io);
  CHECK(c.heard(EPOLLOUT));
  c.events.clear();
  REQUIRE(::write(third.ends[1], "z", 1) == 1);
  REQUIRE(::write(forgotten_pair.ends[1], "w", 1) == 1);
  REQUIRE(::write(kept_pair.ends[1], "v", 1) == 1);
  run_ready(io);
  CHECK(c.heard(EPOLLIN));
  CHECK(a.events.size() + b.events.size() == 1);  // only the one still watched
}

TEST_CASE("a descriptor epoll refuses is not watched, and says why") {
  boost::asio::io_context io;
  auto& loop = ReadinessLoop::of(io);
  Recorder recorder;
  ReadinessLoop::Token token = 0;
  boost::system::error_code ec;
  CHECK_FALSE(loop.watch(-1, recorder, nullptr, token, ec));
  CHECK(ec.value() == EBADF);
}

TEST_CASE("a watcher's hold is let go after forget(), once the handler ran, or with the loop") {
  SocketPair pair;
  Recorder recorder;
  ReadinessLoop::Token token = 0;
  boost::system::error_code ec;
  std::weak_ptr<int> forgotten;
  std::weak_ptr<int> kept;
  {
    boost::asio::io_context io;
    auto& loop = ReadinessLoop::of(io);
    auto hold = std::make_shared<int>(1);
    forgotten = hold;
    REQUIRE(loop.watch(pair.ends[0], recorder, std::move(hold), token, ec));
    loop.forget(token, pair.ends[0]);  // it stays open: watched again below
    CHECK_FALSE(forgotten.expired());  // the watcher may be inside its last call
    run_ready(io);
    CHECK(forgotten.expired());

    hold = std::make_shared<int>(2);
    kept = hold;
    REQUIRE(loop.watch(pair.ends[0], recorder, std::move(hold), token, ec));
    run_ready(io);
    CHECK_FALSE(kept.expired());
  }
  CHECK(kept.expired());
}
