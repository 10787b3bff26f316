// A read-only multi-key command whose keys live on several shards (SINTER, ZUNION, PFCOUNT,
// LCS, ...): each key is fetched from its own shard (SMEMBERS k, GET k, ...) and the answer is
// computed at the router, as Redis would (router/merge/gathered/).
#include <vector>

#include "protocol/resp_writer.h"
#include "router/merge/gathered/gather_merge.h"
#include "router/routes/routing.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

void route_gathered(const Routed& routed) {
  auto& client = routed.client;
  const auto& map = client.worker().shard_map();
  const auto& args = routed.request.args;
  const auto& keys = routed.plan.keys;
  const GatherRule& rule = *gather_rule(routed.spec);

  GatherBrief brief;
  brief.rule = &rule;
  brief.command = upper_name(routed.spec);
  brief.args.assign(args.begin(), args.end());
  brief.protocol = client.state().protocol;
  brief.max_bytes = client.worker().config().limits.max_merge_bytes;
  brief.key_positions.reserve(keys.size());
  brief.fragment_names.reserve(keys.size() * rule.fetch.size());
  for (const auto& key : keys) {
    brief.key_positions.push_back(key.position);
    for (std::size_t f = 0; f < rule.fetch.size(); ++f)
      brief.fragment_names.push_back(map.shard(key.owner.shard).name);
  }
  auto fragments = static_cast<std::uint32_t>(brief.fragment_names.size());
  auto slot = client.open_slot(fragments, make_gather_merge(std::move(brief)));

  std::string& bytes = client.scratch();
  std::vector<std::string_view> command;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    for (std::size_t f = 0; f < rule.fetch.size(); ++f) {
      const FetchCommand& fetch = rule.fetch[f];
      command.clear();
      command.push_back(fetch.name);
      command.push_back(args[keys[k].position]);
      command.insert(command.end(), fetch.after_key.begin(), fetch.after_key.end());
      bytes.clear();
      protocol::RespWriter(bytes).command(command);
      client.backend(keys[k].owner.shard)
          .send(bytes, &client, slot, first_fetch(rule, k) + static_cast<std::uint32_t>(f));
    }
  }
}

}  // namespace santral::router
