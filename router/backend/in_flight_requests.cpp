#include "router/backend/in_flight_requests.h"

#include <algorithm>
#include <utility>

namespace santral::router {

using Clock = std::chrono::steady_clock;

void InFlightRequests::put_first(const std::vector<ReplyOwner>& owners, Clock::time_point now,
                                 Clock::duration timeout) {
  for (auto owner = owners.rbegin(); owner != owners.rend(); ++owner)
    requests_.push_front({nullptr, 0, 0, *owner, now, now + timeout});
}

bool InFlightRequests::handshaking() const {
  return !requests_.empty() && (requests_.front().owner == ReplyOwner::Handshake ||
                                requests_.front().owner == ReplyOwner::ClientId);
}

bool InFlightRequests::carries_requests() const {
  return std::any_of(requests_.begin(), requests_.end(), [](const Request& r) {
    return r.owner == ReplyOwner::Client || r.owner == ReplyOwner::ClientWrite ||
           r.owner == ReplyOwner::Silent;
  });
}

std::optional<InFlightRequests::Overdue> InFlightRequests::overdue(
    Clock::time_point now, const config::Timeouts& timeouts) const {
  if (requests_.empty() || now <= requests_.front().deadline) return std::nullopt;
  const auto& front = requests_.front();
  bool client = front.owner == ReplyOwner::Client || front.owner == ReplyOwner::ClientWrite ||
                front.owner == ReplyOwner::WriteConcern;
  auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(front.deadline - front.sent);
  // A script's own limit (send_within), or every other request's.
  std::string_view setting = limit == timeouts.script && limit != timeouts.request
                                 ? "timeouts.script_ms"
                                 : "timeouts.request_ms";
  return Overdue{client, limit, setting};
}

InFlightRequests InFlightRequests::take() {
  InFlightRequests taken;
  taken.requests_ = std::move(requests_);
  requests_.clear();
  return taken;
}

void InFlightRequests::fail(const std::string& reply, std::size_t shard, ShardStats& stats) const {
  auto now = Clock::now();
  for (const auto& r : requests_) {
    if (r.owner != ReplyOwner::Client && r.owner != ReplyOwner::ClientWrite) continue;
    ++stats.errors;
    r.sink->timed(r.slot, r.fragment, {shard, r.held, now - r.sent});
    r.sink->deliver(r.slot, r.fragment, reply);
  }
}

}  // namespace santral::router
