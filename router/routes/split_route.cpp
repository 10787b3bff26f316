// Multi-key commands whose keys live on several shards: one sub-command per shard carrying
// that shard's keys, and a merge that puts the replies back together.
//
//   MGET a b c d          a,c on shard0   b on shard2   d on shard1
//     fragment 0 -> shard0: MGET a c      positions: a=(0,0) b=(1,0) c=(0,1) d=(2,0)
//     fragment 1 -> shard2: MGET b
//     fragment 2 -> shard1: MGET d        merge: [f0[0], f1[0], f0[1], f2[0]]
#include <vector>

#include "config/shard_map.h"
#include "protocol/errors.h"
#include "protocol/key_extraction.h"
#include "protocol/resp_writer.h"
#include "router/session/client_session.h"
#include "router/merge/merge_plan.h"
#include "router/routes/routing.h"
#include "router/process/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

struct Fragment {
  std::size_t shard;
  std::vector<std::string_view> args;
};

}  // namespace

void route_split(const Routed& routed) {
  auto& session = routed.session;
  const auto& args = routed.request.args;
  const auto& map = session.worker().shard_map();
  auto& positions = session.key_positions();
  if (!protocol::find_keys(routed.spec, args, positions) || positions.empty())
    return session.reply_error(error_message(ClientError::NoKeysFound, routed.spec.name));

  // Most calls have every key on one shard: then the request goes there untouched.
  std::size_t first_shard = map.shard_for_key(args[positions.front()]);
  std::vector<std::size_t> shard_of(positions.size(), first_shard);
  bool one_shard = true;
  for (std::size_t i = 1; i < positions.size(); ++i) {
    shard_of[i] = map.shard_for_key(args[positions[i]]);
    one_shard = one_shard && shard_of[i] == first_shard;
  }
  if (one_shard) return forward_whole(routed, first_shard);

  // A key and the arguments that belong to it (MSET: key value).
  std::size_t width = std::max<std::int16_t>(1, routed.spec.key_specs.front().keystep);
  std::vector<Fragment> fragments;
  std::vector<std::uint32_t> fragment_of_shard(map.shard_count(), UINT32_MAX);
  MergePlan plan;
  plan.kind = routed.spec.merge;
  plan.command = upper_name(routed.spec);
  plan.protocol = session.state().protocol;
  plan.positions.reserve(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    std::uint32_t& f = fragment_of_shard[shard_of[i]];
    if (f == UINT32_MAX) {
      f = static_cast<std::uint32_t>(fragments.size());
      fragments.push_back({shard_of[i], {args[0]}});
      plan.fragment_names.push_back(map.shard(shard_of[i]).name);
    }
    auto& fragment = fragments[f];
    plan.positions.emplace_back(f, static_cast<std::uint32_t>((fragment.args.size() - 1) / width));
    for (std::size_t k = 0; k < width && positions[i] + k < args.size(); ++k)
      fragment.args.push_back(args[positions[i] + k]);
  }

  auto slot =
      session.open_slot(static_cast<std::uint32_t>(fragments.size()), make_merge(std::move(plan)));
  std::string& bytes = session.scratch();
  for (std::uint32_t f = 0; f < fragments.size(); ++f) {
    bytes.clear();
    protocol::RespWriter(bytes).command(fragments[f].args);
    session.backend(fragments[f].shard).send(bytes, &session, slot, f);
  }
}

}  // namespace santral::router
