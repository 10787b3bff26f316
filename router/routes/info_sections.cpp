#include "router/routes/info_sections.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "router/backend/connection_pool.h"
#include "router/backend/draining_connections.h"
#include "router/resharding/key_conflict.h"
#include "router/runtime/worker_services.h"
#include "santral/version.h"

namespace santral::router {

InfoRequest parse_info_request(std::span<const std::string_view> args) {
  InfoRequest wanted;
  if (args.size() <= 1) {
    wanted.santral = true;
    return wanted;
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string section(args[i]);
    for (auto& c : section) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (section == "santral") {
      wanted.santral = true;
    } else if (section == "shards") {
      wanted.shards = true;
    } else {
      if (section == "all" || section == "everything") wanted.santral = wanted.shards = true;
      if (section == "default") wanted.santral = true;
      wanted.backend_sections.push_back(std::move(section));
    }
  }
  wanted.only_santral = wanted.backend_sections.empty() && !wanted.shards;
  return wanted;
}

namespace {

// The counters every worker publishes, summed into INFO's santral section.
struct Total {
  std::string_view name;
  std::atomic<std::uint64_t> WorkerTotals::*counter;
};
constexpr Total kTotals[] = {
    {"total_commands_processed", &WorkerTotals::commands},
    {"total_error_replies", &WorkerTotals::command_errors},
    {"total_shard_requests", &WorkerTotals::shard_requests},
    {"total_shard_errors", &WorkerTotals::shard_errors},
    {"total_shard_timeouts", &WorkerTotals::shard_timeouts},
    {"total_net_input_bytes", &WorkerTotals::client_bytes_in},
    {"total_requests_parsed", &WorkerTotals::requests_parsed},
    {"total_net_output_bytes", &WorkerTotals::client_bytes_out},
    {"near_cache_hits", &WorkerTotals::near_cache_hits},
    {"near_cache_misses", &WorkerTotals::near_cache_misses},
    {"near_cache_evictions", &WorkerTotals::near_cache_evictions},
    {"near_cache_invalidations", &WorkerTotals::near_cache_invalidations},
    {"near_cache_bytes", &WorkerTotals::near_cache_bytes},
    {"near_cache_keys", &WorkerTotals::near_cache_keys},
};

}  // namespace

std::string santral_info_section(WorkerServices& worker) {
  const auto& config = worker.config();
  const auto& map = worker.shard_map();
  auto& shared = worker.shared();
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                 shared.started)
                    .count();
  std::string out = "# Santral\r\n";
  auto line = [&out](std::string_view key, const auto& value) {
    fmt::format_to(std::back_inserter(out), "{}:{}\r\n", key, value);
  };
  line("santral_version", kVersion);
  line("config_file", config.source.string());
  line("config_version", worker.topology().shown_version());
  line("uptime_in_seconds", uptime);
  line("workers", config.workers);
  line("connected_clients", shared.connected_clients.load());
  line("total_connections_received", shared.next_client_id.load() - 1);
  line("rejected_connections", shared.rejected_clients.load());
  // Keys a move found on both shards with different values, kept apart (key_conflict.h), and
  // connections given up on that their shards have not yet proven over (draining_connections.h).
  line("move_conflicts", move_conflicts());
  line("draining_connections", DrainingConnections::everywhere().size());
  for (const auto& [name, counter] : kTotals) {
    std::uint64_t total = 0;
    for (const WorkerServices* peer : worker.peers())
      total += (peer->published().*counter).load(std::memory_order_relaxed);
    line(name, total);
  }
  line("hash", config.hash_name);
  line("distribution", config::distribution_name(config.distribution));
  line("hash_tag", config.hash_tag);
  line("shards", map.shard_count());
  // SANTRAL ANALYZE: the share of requests sampled now (0: no analysis runs).
  auto every = shared.analysis_every.load(std::memory_order_relaxed);
  line("analysis_sample_rate", every == 0 ? 0.0 : 1.0 / every);
  // Each user with limits: its connections and what its limits refused on this router.
  for (const auto* limiter : shared.limiters.shown()) {
    auto limits = limiter->limits();
    auto counters = limiter->counters();
    fmt::format_to(std::back_inserter(out),
                   "user_limits_{}:connections={},requests_per_s={},burst={},max_connections={},"
                   "max_pipeline={},refused_requests={},refused_connections={},"
                   "refused_pipeline={},wait_ms={},held_requests={}\r\n",
                   limiter->name(), counters.connections, limits.requests_per_s, limits.burst,
                   limits.max_connections, limits.max_pipeline, counters.refused_requests,
                   counters.refused_connections, counters.refused_pipeline, limits.wait_ms,
                   counters.held_requests);
  }
  // Each namespace with limits: what its token bucket refused on this router.
  for (const auto* limiter : shared.limiters.shown_namespaces()) {
    auto limits = limiter->limits();
    fmt::format_to(std::back_inserter(out),
                   "namespace_limits_{}:requests_per_s={},burst={},refused_requests={}\r\n",
                   limiter->name(), limits.requests_per_s, limits.burst,
                   limiter->counters().refused_requests);
  }
  std::lock_guard guard(shared.failover_lock);
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    const auto& shard = map.shard(s);
    for (const auto& server : worker.pool().servers(s)) {
      fmt::format_to(std::back_inserter(out),
                     "shard{}:name={},address={},role={},weight={},state={}", s, shard.name,
                     server.address, server.replica ? "replica" : "primary", shard.weight,
                     server.state_name());
      // As SANTRAL SHARDMAP: a replica's freshness, the master a primary follows.
      if (server.replica)
        fmt::format_to(std::back_inserter(out), ",reads={},lag_ms={}", server.fresh ? "yes" : "no",
                       server.lag_ms);
      else if (!shard.sentinel_master.empty())
        // And the replication offset a failover's new primary must reach (-1: not read yet).
        fmt::format_to(std::back_inserter(out), ",sentinel_master={},read_offset={}",
                       shard.sentinel_master, shared.primary_readings.last(server.address).offset);
      out += "\r\n";
    }
    if (auto failover = shared.failovers.find(shard.name); failover != shared.failovers.end())
      fmt::format_to(std::back_inserter(out),
                     "shard{}_last_failover:unix_time={},from={},to={}\r\n", s,
                     failover->second.unix_time, failover->second.from, failover->second.to);
    // Its last failover that lost writes, and whether its writes are refused for it.
    if (auto lost = shared.lost_writes.find(shard.name); lost != shared.lost_writes.end()) {
      const auto& report = lost->second;
      fmt::format_to(std::back_inserter(out),
                     "shard{}_lost_writes:writes={},lineage={},unix_time={},from={},to={},"
                     "read_offset={},missing_bytes={}\r\n",
                     s, report.writes_name(), lineage_name(report.verdict.lineage),
                     report.failover.unix_time, report.failover.from, report.failover.to,
                     report.verdict.read_offset, report.verdict.missing_bytes);
    }
  }
  return out;
}

}  // namespace santral::router
