#include "router/admin/health_probes.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "protocol/errors.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace asio = boost::asio;
using protocol::ClientError;
using protocol::error_message;

namespace {

// One probe's answers: each worker's, nullopt for one that has not answered (yet, or within
// the bound). Touched on the origin's thread only; workers pass the handle along.
template <typename T>
struct ProbeRound {
  std::vector<std::optional<T>> answers;
  std::size_t left = 0;
  std::function<void(std::vector<std::optional<T>>)> done;  // empty once called
  std::weak_ptr<asio::steady_timer> timer;

  void finish() {
    if (!done) return;
    if (auto pending = timer.lock()) pending->cancel();
    std::exchange(done, nullptr)(std::move(answers));
  }
};

// Runs `collect` on every worker's thread; `done` runs on `origin` once all answered or once
// `bound` has passed, whichever comes first. A worker's answer that comes later is dropped.
template <typename T>
void ask_within(asio::io_context& origin, const std::vector<WorkerServices*>& workers,
                std::chrono::milliseconds bound, T (*collect)(WorkerServices&),
                std::function<void(std::vector<std::optional<T>>)> done) {
  auto round = std::make_shared<ProbeRound<T>>();
  round->answers.resize(workers.size());
  round->left = workers.size();
  round->done = std::move(done);
  if (workers.empty()) {
    asio::post(origin, [round] { round->finish(); });
    return;
  }
  auto timer = std::make_shared<asio::steady_timer>(origin, bound);
  round->timer = timer;
  timer->async_wait([round, timer](boost::system::error_code) { round->finish(); });
  for (std::size_t i = 0; i < workers.size(); ++i) {
    WorkerServices* worker = workers[i];
    // The handle moves on into the post home: no worker thread lets go of the last one.
    asio::post(worker->io(), [&origin, worker, i, collect, round]() mutable {
      T answer = collect(*worker);
      asio::post(origin, [i, round = std::move(round), answer = std::move(answer)]() mutable {
        if (!round->done) return;
        round->answers[i] = std::move(answer);
        if (--round->left == 0) round->finish();
      });
    });
  }
}

bool answer_probe(WorkerServices&) {
  return true;
}

// How one worker reaches the primary of each shard of the map it routes by.
struct PrimaryState {
  std::string shard;
  std::string state;  // up, connecting, down
};

std::vector<PrimaryState> primaries_of(WorkerServices& worker) {
  std::vector<PrimaryState> out;
  const auto& map = worker.shard_map();
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    auto servers = worker.pool().servers(s);
    if (!servers.empty())
      out.push_back({map.shard(s).name, std::string(servers.front().state_name())});
  }
  return out;
}

template <typename T>
std::optional<std::size_t> first_silent(const std::vector<std::optional<T>>& answers) {
  for (std::size_t i = 0; i < answers.size(); ++i)
    if (!answers[i]) return i;
  return std::nullopt;
}

}  // namespace

void HealthProbes::live(std::function<void(ProbeAnswer)> done) {
  ask_within<bool>(
      server_.io(), server_.worker_services(), bound_, answer_probe,
      [bound = bound_, done = std::move(done)](auto answered) {
        if (auto silent = first_silent(answered))
          return done({false, "stuck",
                       error_message(ClientError::ProbeWorkerSilent, *silent, bound.count())});
        done({true, "live", {}});
      });
}

void HealthProbes::ready(std::function<void(ProbeAnswer)> done) {
  if (auto why = server_.unready()) return done({false, why->status, why->reason});
  ask_within<std::vector<PrimaryState>>(
      server_.io(), server_.worker_services(), bound_, primaries_of,
      [this, done = std::move(done)](auto workers) {
        // What changed while the workers answered (a SIGTERM, a lost lease) counts too.
        if (auto why = server_.unready()) return done({false, why->status, why->reason});
        if (auto silent = first_silent(workers))
          return done({false, "worker_silent",
                       error_message(ClientError::ProbeWorkerSilent, *silent, bound_.count())});
        for (const auto& worker : workers)
          for (const auto& primary : *worker) {
            if (primary.state == "up") continue;
            if (!ever_ready_)
              return done(
                  {false, "starting",
                   error_message(ClientError::ProbeStarting, primary.shard, primary.state)});
            return done({false, "shard_down",
                         error_message(ClientError::ProbeShardDown, primary.shard, primary.state)});
          }
        ever_ready_ = true;
        done({true, "ready", {}});
      });
}

}  // namespace santral::router
