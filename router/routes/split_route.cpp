// Multi-key commands whose keys live on several shards: one sub-command per shard carrying
// that shard's keys, and a merge that puts the replies back together.
//
//   MGET a b c d          a,c on shard0   b on shard2   d on shard1
//     fragment 0 -> shard0: MGET a c      positions: a=(0,0) b=(1,0) c=(0,1) d=(2,0)
//     fragment 1 -> shard2: MGET b
//     fragment 2 -> shard1: MGET d        merge: [f0[0], f1[0], f0[1], f2[0]]
#include <vector>

#include "placement/shard_map.h"
#include "protocol/errors.h"
#include "protocol/key_extraction.h"
#include "protocol/resp_writer.h"
#include "router/merge/merge_brief.h"
#include "router/routes/routing.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

void route_split(const Routed& routed) {
  auto& client = routed.client;
  const auto& args = routed.request.args;
  const auto& map = client.worker().shard_map();
  const auto& plan = routed.plan;

  // A key and the arguments that belong to it (MSET: key value). The plan numbered the
  // fragments (PlannedKey::fragment).
  std::size_t width = std::max<std::int16_t>(1, routed.spec.key_specs.front().keystep);
  std::vector<std::vector<std::string_view>> fragments(plan.shards.size(), {args[0]});
  MergeBrief merge;  // how the replies come back together
  merge.kind = routed.spec.merge;
  merge.command = upper_name(routed.spec);
  merge.protocol = client.state().protocol;
  merge.positions.reserve(plan.keys.size());
  for (std::size_t shard : plan.shards) merge.fragment_names.push_back(map.shard(shard).name);
  for (const auto& key : plan.keys) {
    auto& fragment = fragments[key.fragment];
    merge.positions.emplace_back(key.fragment,
                                 static_cast<std::uint32_t>((fragment.size() - 1) / width));
    for (std::size_t k = 0; k < width && key.position + k < args.size(); ++k)
      fragment.push_back(args[key.position + k]);
  }

  auto slot =
      client.open_slot(static_cast<std::uint32_t>(fragments.size()), make_merge(std::move(merge)));
  std::string& bytes = client.scratch();
  for (std::uint32_t f = 0; f < fragments.size(); ++f) {
    bytes.clear();
    protocol::RespWriter(bytes).command(fragments[f]);
    client.backend(plan.shards[f]).send(bytes, &client, slot, f);
  }
}

}  // namespace santral::router
