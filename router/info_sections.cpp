#include "router/info_sections.h"

#include <cctype>
#include <chrono>
#include <iterator>

#include <fmt/format.h>

#include "router/connection_pool.h"
#include "router/worker.h"
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

std::string santral_info_section(Worker& worker) {
  const auto& config = worker.config();
  const auto& map = worker.shard_map();
  auto& shared = worker.shared();
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                 shared.started)
                    .count();
  const char* distribution = config.distribution == config::Distribution::Ketama   ? "ketama"
                             : config.distribution == config::Distribution::Modula ? "modula"
                                                                                   : "random";
  std::string out = "# Santral\r\n";
  auto line = [&out](std::string_view key, const auto& value) {
    fmt::format_to(std::back_inserter(out), "{}:{}\r\n", key, value);
  };
  line("santral_version", kVersion);
  line("config_file", config.source.string());
  line("config_version", worker.topology().version);
  line("uptime_in_seconds", uptime);
  line("workers", config.workers);
  line("connected_clients", shared.connected_clients.load());
  line("total_connections_received", shared.next_client_id.load() - 1);
  line("rejected_connections", shared.rejected_clients.load());
  std::uint64_t totals[13] = {};
  for (const Worker* peer : worker.peers()) {
    const auto& p = peer->published();
    auto relaxed = std::memory_order_relaxed;
    totals[0] += p.commands.load(relaxed);
    totals[1] += p.command_errors.load(relaxed);
    totals[2] += p.shard_requests.load(relaxed);
    totals[3] += p.shard_errors.load(relaxed);
    totals[4] += p.shard_timeouts.load(relaxed);
    totals[5] += p.client_bytes_in.load(relaxed);
    totals[6] += p.client_bytes_out.load(relaxed);
    totals[7] += p.near_cache_hits.load(relaxed);
    totals[8] += p.near_cache_misses.load(relaxed);
    totals[9] += p.near_cache_evictions.load(relaxed);
    totals[10] += p.near_cache_invalidations.load(relaxed);
    totals[11] += p.near_cache_bytes.load(relaxed);
    totals[12] += p.near_cache_keys.load(relaxed);
  }
  line("total_commands_processed", totals[0]);
  line("total_error_replies", totals[1]);
  line("total_shard_requests", totals[2]);
  line("total_shard_errors", totals[3]);
  line("total_shard_timeouts", totals[4]);
  line("total_net_input_bytes", totals[5]);
  line("total_net_output_bytes", totals[6]);
  line("near_cache_hits", totals[7]);
  line("near_cache_misses", totals[8]);
  line("near_cache_evictions", totals[9]);
  line("near_cache_invalidations", totals[10]);
  line("near_cache_bytes", totals[11]);
  line("near_cache_keys", totals[12]);
  line("hash", config.hash_name);
  line("distribution", distribution);
  line("hash_tag", config.hash_tag);
  line("shards", map.shard_count());
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    for (const auto& server : worker.pool().servers(s)) {
      const char* state = server.ejected                                         ? "down"
                          : server.state == BackendConnection::State::Up         ? "up"
                          : server.state == BackendConnection::State::Connecting ? "connecting"
                                                                                 : "down";
      fmt::format_to(std::back_inserter(out),
                     "shard{}:name={},address={},role={},weight={},state={}\r\n", s,
                     map.shard(s).name, server.address, server.replica ? "replica" : "primary",
                     map.shard(s).weight, state);
    }
  }
  return out;
}

}  // namespace santral::router
