#include "router/backend/failover_hold.h"

#include <iterator>
#include <utility>

namespace santral::router {

void FailoverHold::hold(std::string_view request, ReplySinkPtr sink, std::uint64_t slot,
                        std::uint32_t fragment, std::chrono::steady_clock::duration limit,
                        const config::WriteConcern* concern) {
  waiting_.push_back({std::string(request), std::move(sink), slot, fragment, limit,
                      std::chrono::steady_clock::now() + wait_,
                      concern ? std::optional(*concern) : std::nullopt});
}

void FailoverHold::put_first(std::deque<Waiting> older) {
  older.insert(older.end(), std::make_move_iterator(waiting_.begin()),
               std::make_move_iterator(waiting_.end()));
  waiting_ = std::move(older);
}

std::deque<FailoverHold::Waiting> FailoverHold::take() {
  return std::exchange(waiting_, {});
}

void FailoverHold::fail(const std::string& reply, ShardStats& stats) {
  for (auto& waiting : take()) {
    ++stats.errors;
    waiting.sink->deliver(waiting.slot, waiting.fragment, reply);
  }
}

void FailoverHold::expire(std::chrono::steady_clock::time_point now, std::size_t shard_index,
                          const std::string& reply, ShardStats& stats) {
  while (expired(now)) {
    auto oldest = std::move(waiting_.front());
    waiting_.pop_front();
    ++stats.errors;
    oldest.sink->timed(oldest.slot, oldest.fragment, {shard_index, now - oldest.arrived, {}});
    oldest.sink->deliver(oldest.slot, oldest.fragment, reply);
  }
}

}  // namespace santral::router
