#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/post.hpp>

#include "router/process/worker.h"

namespace santral::router {

// Runs `collect` on every worker's own thread and hands the results, in worker order, to
// `done` back on `origin`'s thread. For the few questions about all clients (CLIENT LIST,
// CLIENT KILL); nothing on the request path uses it.
template <typename T>
void gather(Worker& origin, std::function<T(Worker&)> collect,
            std::function<void(std::vector<T>)> done) {
  struct Pending {
    std::vector<T> results;
    std::size_t left;
    std::function<void(std::vector<T>)> done;
  };
  const auto& peers = origin.peers();
  auto pending = std::make_shared<Pending>(
      Pending{std::vector<T>(peers.size()), peers.size(), std::move(done)});
  auto shared_collect = std::make_shared<std::function<T(Worker&)>>(std::move(collect));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    Worker* peer = peers[i];
    boost::asio::post(peer->io(), [peer, i, pending, shared_collect, &origin]() {
      T result = (*shared_collect)(*peer);
      boost::asio::post(origin.io(), [i, pending, result = std::move(result)]() mutable {
        pending->results[i] = std::move(result);
        if (--pending->left == 0) pending->done(std::move(pending->results));
      });
    });
  }
}

}  // namespace santral::router
