#include "router/process/fleet_start.h"

#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "config/shared_map.h"
#include "placement/change.h"
#include "placement/shard_map.h"
#include "router/backend/sentinel_lookup.h"
#include "router/cluster/map_document.h"
#include "router/process/server.h"

namespace santral::router {

namespace {

RouterRecord self_record(const config::Config& config) {
  RouterRecord self = own_record(config);
  self.pid = static_cast<long>(::getpid());
  self.started = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  return self;
}

}  // namespace

FleetStart join_fleet(const ConfigSource& source, config::Config config) {
  FleetStart start;
  const auto& cluster = config.cluster;
  auto self = self_record(config);
  std::string name = self.name;
  start.agent = std::make_unique<FleetAgent>(cluster, std::move(self));
  const std::string& key = start.agent->map_key();
  std::string file = source.path.string();
  std::string document;
  if (config::has_shard_map(config)) {
    start.file_map_text = config::shared_map_text(source.read_text(), source.path);
    document = encode_map({start.file_map_text, name});
  }
  if (cluster.fence == config::ClusterSettings::Fence::Acl)
    start.agent->fence_at_shards({config.backend.username, config.backend.password});
  FleetAgent::Joined joined;
  try {
    joined = start.agent->join(document);
  } catch (const RouterNameTaken& e) {
    throw FleetJoinFailed(fmt::format("fleet '{}': {}", cluster.name, e.what()));
  } catch (const EtcdUnavailable& e) {
    throw FleetJoinFailed(fmt::format(
        "fleet '{}': cannot reach etcd within {} ms (cluster.start_timeout_ms): {}; start etcd, "
        "or remove cluster: from {} to run this router alone",
        cluster.name, cluster.start_timeout.count(), e.what(), file));
  }
  start.salting = joined.salting;
  start.move = joined.move;
  if (!joined.map)
    throw FleetJoinFailed(fmt::format(
        "fleet '{}': etcd has no map at {} and {} has none of its own (no shards:); push one "
        "with `santral map push FILE` through another router, or add shards: to {}",
        cluster.name, key, file, file));
  auto decoded = decode_map(key, joined.map->value);
  if (!decoded.shared) {
    if (!config::has_shard_map(config))
      throw FleetJoinFailed(fmt::format(
          "fleet '{}': the map in etcd is refused: {}; and {} has none of its own: push a valid "
          "one with `santral map push FILE`",
          cluster.name, decoded.error, file));
    // The routers already serving keep the last map they could take, which this one cannot
    // know: serving its file's map beside them could put a key on two owners.
    if (joined.others > 0)
      throw FleetJoinFailed(fmt::format(
          "fleet '{}': the map in etcd is refused: {}; {} other router(s) of the fleet serve the "
          "last map they took, which this router cannot read: push a valid one through one of "
          "them (`santral map push FILE`), then start this router again",
          cluster.name, decoded.error, joined.others));
    spdlog::error(
        "fleet '{}': the map in etcd is refused: {}; no other router of the fleet is live: serving "
        "{}'s own map until a valid one is pushed (`santral map push FILE`)",
        cluster.name, decoded.error, file);
    start.map_text = start.file_map_text;
    start.agent->use_shards(config.shards);
    start.agent->admit_at_shards();
    start.config = std::move(config);
    return start;
  }
  if (joined.published) {
    spdlog::info("fleet '{}': etcd had no map; published {}'s as version {} ({})", cluster.name,
                 file, joined.map->mod_revision, key);
  } else {
    spdlog::info("fleet '{}': serving the fleet's map version {} from etcd (pushed by {})",
                 cluster.name, joined.map->mod_revision,
                 decoded.pushed_by.empty() ? "?" : decoded.pushed_by);
    if (config::has_shard_map(config) && start.file_map_text != decoded.config_text) {
      placement::ShardMap mine(config);
      placement::ShardMap fleets(*decoded.shared);
      spdlog::warn(
          "fleet '{}': {}'s map differs from the fleet's version {} ({} from the file's); "
          "serving the fleet's. `santral map push {}` proposes the file's",
          cluster.name, file, joined.map->mod_revision,
          placement::compare_placement(mine, fleets).summary(), file);
    }
  }
  config::adopt_shared_map(config, *decoded.shared);
  resolve_sentinel_shards(config);  // the fleet's map names masters: this router asks
  // With cluster.fence: acl this router's shard user exists before it serves.
  start.agent->use_shards(config.shards);
  start.agent->admit_at_shards();
  start.config = std::move(config);
  start.map_version = static_cast<std::uint64_t>(joined.map->mod_revision);
  start.map_text = decoded.config_text;
  start.salt_naming_text = decoded.salt_naming;
  return start;
}

}  // namespace santral::router
