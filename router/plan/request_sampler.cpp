#include "router/plan/request_sampler.h"

#include <algorithm>
#include <ctime>

#include "protocol/arguments.h"
#include "router/runtime/plan.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

// The shards a plan sends its request to (0: Santral answers it, or refuses it).
std::uint16_t shards_reached(const Plan& plan, std::size_t placed) {
  switch (plan.kind) {
    case RouteKind::Answered:
    case RouteKind::Local:
    case RouteKind::Refused:
      return 0;
    case RouteKind::Broadcast:
    case RouteKind::Split:  // one sub-command per shard
      return static_cast<std::uint16_t>(plan.shards.size());
    default:
      break;
  }
  if (plan.shard || plan.keys.size() == 1) return 1;
  if (plan.keys.empty()) return plan.any_shard ? 1 : static_cast<std::uint16_t>(placed);
  std::vector<std::size_t> owners;
  for (const auto& key : plan.keys) owners.push_back(key.owner.shard);
  std::sort(owners.begin(), owners.end());
  return static_cast<std::uint16_t>(std::unique(owners.begin(), owners.end()) - owners.begin());
}

// A keyless request's pattern: KEYS <pattern>, or the MATCH option of SCAN and its kind.
std::string pattern_of(const Routed& routed) {
  const auto& args = routed.request.args;
  if (routed.spec.name == "keys" && args.size() > 1) return std::string(args[1]);
  for (std::size_t i = 1; i + 1 < args.size(); ++i)
    if (protocol::equals_nocase(args[i], "MATCH")) return std::string(args[i + 1]);
  return {};
}

}  // namespace

void RequestSampler::sample(const Routed& routed) {
  if (taken_.size() >= kMostSamples) return;
  const auto& plan = routed.plan;
  SampledRequest s;
  if (!plan.keys.empty())
    s.key = routed.request.args[plan.keys.front().position];
  else if (plan.kind == RouteKind::Broadcast)
    s.pattern = pattern_of(routed);
  s.command = routed.spec.name;
  s.write = routed.spec.has(protocol::kWrite);
  auto placed = routed.client.worker().shard_map().placed_count();
  s.shards = shards_reached(plan, placed);
  s.of = static_cast<std::uint16_t>(placed);
  // The coarse clock (a tick of a few ms, a read of a few ns): enough to order new keys over
  // an analysis's seconds; samples of one tick keep their order (stable sort, analysis/).
  timespec now{};
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  s.at_us = std::int64_t{now.tv_sec} * 1'000'000 + now.tv_nsec / 1000;
  taken_.push_back(std::move(s));
}

}  // namespace santral::router
