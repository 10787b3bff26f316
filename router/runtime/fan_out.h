#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace santral::router {

// Asking every worker something and putting the answers together on one thread, `origin` (a
// worker's io_context, or the server's):
//
//   origin ──post──► worker 0: ask ──answer(r0)──post──► origin: results[0] = r0
//          ──post──► worker 1: ask ──answer(r1)──post──► origin: results[1] = r1
//                                                        the last one in: done(results)
//
// Only plain data crosses threads, so that a client can wait for the answers:
//  - `collect` / `ask` is shared by every worker's thread at once: it captures ids, slot
//    numbers, strings, shared_ptr<const ...>; never a RequestContext or its intrusive_ptr (whose
//    count is not atomic).
//  - `done` may hold the client: it is made, run and destroyed on origin's thread only. Other
//    threads pass along a handle to the pending results but never copy, run or destroy `done`;
//    the last answer moves it out and runs it on origin.
// Call fan_out from origin's thread. `Peer` is anything with an io() (a Worker).

// How a worker answers: exactly once, from its own thread (at once or from a later callback).
template <typename T>
using FanOutAnswer = std::function<void(T)>;

namespace fan_out_detail {

template <typename T>
class Pending {
 public:
  Pending(boost::asio::io_context& origin, std::size_t count,
          std::function<void(std::vector<T>)> done)
      : origin_(&origin), results_(count), left_(count), done_(std::move(done)) {}

  boost::asio::io_context& origin() const { return *origin_; }

  // On origin's thread.
  void take(std::size_t index, T result) {
    results_[index] = std::move(result);
    if (--left_ == 0) finish();
  }
  // On origin's thread: `done` leaves the shared state here, so that whichever thread lets go
  // of the last handle destroys only an empty function.
  void finish() {
    auto done = std::exchange(done_, nullptr);
    auto results = std::move(results_);
    done(std::move(results));
  }

 private:
  boost::asio::io_context* origin_;
  std::vector<T> results_;
  std::size_t left_;
  std::function<void(std::vector<T>)> done_;
};

// Worker `index`'s answer: posts its result home. The handle moves into the post, so the
// worker's thread keeps no share of the pending results once it has answered.
template <typename T>
FanOutAnswer<T> answer_to(std::shared_ptr<Pending<T>> pending, std::size_t index) {
  return [pending = std::move(pending), index](T result) mutable {
    auto& origin = pending->origin();
    boost::asio::post(origin,
                      [pending = std::move(pending), index, result = std::move(result)]() mutable {
                        pending->take(index, std::move(result));
                      });
  };
}

}  // namespace fan_out_detail

// Runs `ask` on every peer's own thread; each answers through the FanOutAnswer it is given,
// possibly later (after its own I/O). `done` gets the answers in peer order, on origin.
template <typename T, typename Peer>
void fan_out_async(boost::asio::io_context& origin, const std::vector<Peer*>& peers,
                   std::type_identity_t<std::function<void(Peer&, FanOutAnswer<T>)>> ask,
                   std::type_identity_t<std::function<void(std::vector<T>)>> done) {
  auto pending =
      std::make_shared<fan_out_detail::Pending<T>>(origin, peers.size(), std::move(done));
  if (peers.empty()) {
    boost::asio::post(origin, [pending = std::move(pending)] { pending->finish(); });
    return;
  }
  auto shared_ask =
      std::make_shared<const std::function<void(Peer&, FanOutAnswer<T>)>>(std::move(ask));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    Peer* peer = peers[i];
    boost::asio::post(peer->io(),
                      [peer, shared_ask, answer = fan_out_detail::answer_to(pending, i)]() mutable {
                        (*shared_ask)(*peer, std::move(answer));
                      });
  }
}

// Runs `collect` on every peer's own thread; `done` gets the results in peer order, on origin.
template <typename T, typename Peer>
void fan_out(boost::asio::io_context& origin, const std::vector<Peer*>& peers,
             std::type_identity_t<std::function<T(Peer&)>> collect,
             std::type_identity_t<std::function<void(std::vector<T>)>> done) {
  fan_out_async<T, Peer>(
      origin, peers,
      [collect = std::move(collect)](Peer& peer, FanOutAnswer<T> answer) { answer(collect(peer)); },
      std::move(done));
}

// A one-way trip through another thread: the returned function may be called (once) from any
// thread and runs `done` on origin's thread, where `done` alone lives (the same rules as
// fan_out's `done`). For asking the server, e.g. SANTRAL RELOAD.
template <typename T>
FanOutAnswer<T> answer_on(boost::asio::io_context& origin,
                          std::type_identity_t<std::function<void(T)>> done) {
  auto pending = std::make_shared<fan_out_detail::Pending<T>>(
      origin, 1,
      [done = std::move(done)](std::vector<T> results) { done(std::move(results.front())); });
  return fan_out_detail::answer_to(std::move(pending), 0);
}

// Runs `act` on every peer's own thread; nothing comes back. `act` is shared by all of them:
// plain data only.
template <typename Peer>
void post_to_each(const std::vector<Peer*>& peers,
                  std::type_identity_t<std::function<void(Peer&)>> act) {
  auto shared_act = std::make_shared<const std::function<void(Peer&)>>(std::move(act));
  for (Peer* peer : peers)
    boost::asio::post(peer->io(), [peer, shared_act] { (*shared_act)(*peer); });
}

}  // namespace santral::router
