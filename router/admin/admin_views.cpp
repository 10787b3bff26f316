#include "router/admin/admin_views.h"

#include <iterator>

#include <fmt/format.h>

#include "santral/version.h"

namespace santral::router {

using nlohmann::json;

namespace {

json latency_json(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"sum_seconds", h.sum_seconds()},
          {"p50_seconds", h.percentile(0.50)},
          {"p99_seconds", h.percentile(0.99)},
          {"p999_seconds", h.percentile(0.999)}};
}

json shard_stats_json(const ShardStats& s) {
  return {{"requests", s.requests},     {"errors", s.errors},
          {"timeouts", s.timeouts},     {"writes_unconfirmed", s.writes_unconfirmed},
          {"bytes_sent", s.bytes_sent}, {"bytes_received", s.bytes_received},
          {"in_flight", s.in_flight},   {"latency", latency_json(s.latency)}};
}

json command_stats_json(const WorkerStats& stats) {
  json commands = json::object();
  for (const auto& [spec, command] : stats.commands)
    commands[std::string(spec->name)] = {{"calls", command.calls},
                                         {"errors", command.errors},
                                         {"latency", latency_json(command.latency)}};
  return commands;
}

json worker_json(const WorkerStats& stats) {
  json shards = json::object();
  for (const auto& [name, shard] : stats.shards) shards[name] = shard_stats_json(shard);
  return {{"connections_accepted", stats.connections_accepted},
          {"connected_clients", stats.connected_clients},
          {"client_bytes_in", stats.client_bytes_in},
          {"client_bytes_out", stats.client_bytes_out},
          {"requests_parsed", stats.requests_parsed},
          {"shards", shards},
          {"commands", command_stats_json(stats)}};
}

// Prometheus text exposition format 0.0.4: a label value escapes \, " and newline.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// The buckets Santral reports, in seconds; each is the count of requests at or below it.
constexpr double kBounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                              0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

void histogram(std::string& out, std::string_view name, std::string_view labels,
               const LatencyHistogram& h) {
  for (double bound : kBounds) {
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < LatencyHistogram::kBuckets; ++i)
      if (LatencyHistogram::upper_bound(i) <= bound) below += h.bucket(i);
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, bound,
                   below);
  }
  fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels,
                 h.count());
  fmt::format_to(std::back_inserter(out), "{}_sum{{{}}} {}\n", name, labels, h.sum_seconds());
  fmt::format_to(std::back_inserter(out), "{}_count{{{}}} {}\n", name, labels, h.count());
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

json near_cache_json(const NearCache::Counters& c) {
  return {{"hits", c.hits},           {"misses", c.misses},
          {"evictions", c.evictions}, {"invalidations", c.invalidations},
          {"bytes", c.bytes},         {"keys", c.keys}};
}

}  // namespace

json stats_json(const ClusterSnapshot& snapshot) {
  json workers = json::array();
  NearCache::Counters cache;
  for (const auto& worker : snapshot.workers) {
    json one = worker_json(worker.stats);
    one["near_cache"] = near_cache_json(worker.near_cache);
    workers.push_back(std::move(one));
    cache += worker.near_cache;
  }
  json total = worker_json(snapshot.total);
  total["near_cache"] = near_cache_json(cache);
  auto limits_json = [](const std::vector<LimitsReport>& reports) {
    json all = json::array();
    for (const auto& r : reports)
      all.push_back({{"name", r.name},
                     {"requests_per_s", r.limits.requests_per_s},
                     {"burst", r.limits.burst},
                     {"max_connections", r.limits.max_connections},
                     {"max_pipeline", r.limits.max_pipeline},
                     {"connections", r.counters.connections},
                     {"refused_requests", r.counters.refused_requests},
                     {"refused_connections", r.counters.refused_connections},
                     {"refused_pipeline", r.counters.refused_pipeline},
                     {"wait_ms", r.limits.wait_ms},
                     {"held_requests", r.counters.held_requests}});
    return all;
  };
  return {{"version", kVersion},
          {"limits",
           {{"users", limits_json(snapshot.user_limits)},
            {"namespaces", limits_json(snapshot.namespace_limits)}}},
          {"config_version", snapshot.topology->shown_version()},
          {"uptime_seconds", snapshot.uptime_seconds},
          {"rejected_clients", snapshot.rejected_clients},
          {"connected_clients", snapshot.total.connected_clients},
          {"total", total},
          {"workers", workers}};
}

std::string prometheus_text(const ClusterSnapshot& snapshot) {
  const auto& total = snapshot.total;
  std::string out;
  family(out, "santral_config_version", "gauge", "Version of the shard map in use.");
  fmt::format_to(std::back_inserter(out), "santral_config_version {}\n",
                 snapshot.topology->shown_version());
  family(out, "santral_uptime_seconds", "gauge", "Seconds since Santral started.");
  fmt::format_to(std::back_inserter(out), "santral_uptime_seconds {}\n", snapshot.uptime_seconds);
  family(out, "santral_connected_clients", "gauge", "Client connections open now.");
  fmt::format_to(std::back_inserter(out), "santral_connected_clients {}\n",
                 total.connected_clients);
  family(out, "santral_connections_total", "counter", "Client connections accepted.");
  fmt::format_to(std::back_inserter(out), "santral_connections_total {}\n",
                 total.connections_accepted);
  family(out, "santral_rejected_connections_total", "counter",
         "Clients refused at limits.max_clients.");
  fmt::format_to(std::back_inserter(out), "santral_rejected_connections_total {}\n",
                 snapshot.rejected_clients);
  family(out, "santral_user_connections", "gauge",
         "Connections logged in as each user with limits (users[].limits).");
  for (const auto& user : snapshot.user_limits)
    fmt::format_to(std::back_inserter(out), "santral_user_connections{{user=\"{}\"}} {}\n",
                   label(user.name), user.counters.connections);
  family(out, "santral_user_refused_total", "counter",
         "Requests and logins refused by a user's limits, by limit.");
  for (const auto& user : snapshot.user_limits) {
    const std::pair<std::string_view, std::uint64_t> refused[] = {
        {"requests_per_s", user.counters.refused_requests},
        {"max_connections", user.counters.refused_connections},
        {"max_pipeline", user.counters.refused_pipeline}};
    for (const auto& [limit, count] : refused)
      fmt::format_to(std::back_inserter(out),
                     "santral_user_refused_total{{user=\"{}\",limit=\"{}\"}} {}\n",
                     label(user.name), limit, count);
  }
  family(
      out, "santral_user_held_total", "counter",
      "Requests that waited for a token of their user's requests_per_s (users[].limits.wait_ms).");
  for (const auto& user : snapshot.user_limits)
    fmt::format_to(std::back_inserter(out), "santral_user_held_total{{user=\"{}\"}} {}\n",
                   label(user.name), user.counters.held_requests);
  family(out, "santral_namespace_refused_total", "counter",
         "Requests refused by a namespace's limits (namespaces[].limits.requests_per_s).");
  for (const auto& ns : snapshot.namespace_limits)
    fmt::format_to(
        std::back_inserter(out),
        "santral_namespace_refused_total{{namespace=\"{}\",limit=\"requests_per_s\"}} {}\n",
        label(ns.name), ns.counters.refused_requests);
  family(out, "santral_client_bytes_total", "counter", "Bytes read from and written to clients.");
  fmt::format_to(std::back_inserter(out), "santral_client_bytes_total{{direction=\"in\"}} {}\n",
                 total.client_bytes_in);
  fmt::format_to(std::back_inserter(out), "santral_client_bytes_total{{direction=\"out\"}} {}\n",
                 total.client_bytes_out);

  family(out, "santral_shard_requests_total", "counter", "Requests sent to each shard server.");
  for (const auto& [name, s] : total.shards)
    fmt::format_to(std::back_inserter(out), "santral_shard_requests_total{{shard=\"{}\"}} {}\n",
                   label(name), s.requests);
  family(out, "santral_shard_errors_total", "counter",
         "Error replies and failed requests, by shard server.");
  for (const auto& [name, s] : total.shards)
    fmt::format_to(std::back_inserter(out), "santral_shard_errors_total{{shard=\"{}\"}} {}\n",
                   label(name), s.errors);
  family(out, "santral_shard_timeouts_total", "counter",
         "Requests that got no reply within timeouts.request_ms.");
  for (const auto& [name, s] : total.shards)
    fmt::format_to(std::back_inserter(out), "santral_shard_timeouts_total{{shard=\"{}\"}} {}\n",
                   label(name), s.timeouts);
  family(out, "santral_shard_writes_unconfirmed_total", "counter",
         "Writes answered NOREPLICAS: fewer replicas than write_concern.replicas confirmed them.");
  for (const auto& [name, s] : total.shards)
    fmt::format_to(std::back_inserter(out),
                   "santral_shard_writes_unconfirmed_total{{shard=\"{}\"}} {}\n", label(name),
                   s.writes_unconfirmed);
  family(out, "santral_shard_bytes_total", "counter",
         "Bytes sent to and received from each shard server.");
  for (const auto& [name, s] : total.shards) {
    fmt::format_to(std::back_inserter(out),
                   "santral_shard_bytes_total{{shard=\"{}\",direction=\"sent\"}} {}\n", label(name),
                   s.bytes_sent);
    fmt::format_to(std::back_inserter(out),
                   "santral_shard_bytes_total{{shard=\"{}\",direction=\"received\"}} {}\n",
                   label(name), s.bytes_received);
  }
  family(out, "santral_shard_in_flight", "gauge",
         "Requests sent to each shard server and not yet answered.");
  for (const auto& [name, s] : total.shards)
    fmt::format_to(std::back_inserter(out), "santral_shard_in_flight{{shard=\"{}\"}} {}\n",
                   label(name), s.in_flight);
  family(out, "santral_shard_request_duration_seconds", "histogram",
         "Time from sending a request to a shard server to its reply.");
  for (const auto& [name, s] : total.shards)
    histogram(out, "santral_shard_request_duration_seconds",
              fmt::format("shard=\"{}\"", label(name)), s.latency);

  family(out, "santral_shard_up", "gauge", "1 when a shard server answers, as worker 0 sees it.");
  if (!snapshot.workers.empty())
    for (const auto& servers : snapshot.workers.front().servers)
      for (const auto& server : servers)
        fmt::format_to(std::back_inserter(out), "santral_shard_up{{shard=\"{}\"}} {}\n",
                       label(server.name), server.state_name() == "up" ? 1 : 0);

  family(out, "santral_commands_total", "counter", "Commands received, by command.");
  for (const auto& [spec, c] : total.commands)
    fmt::format_to(std::back_inserter(out), "santral_commands_total{{command=\"{}\"}} {}\n",
                   label(spec->name), c.calls);
  family(out, "santral_command_errors_total", "counter",
         "Commands answered with an error, by command.");
  for (const auto& [spec, c] : total.commands)
    fmt::format_to(std::back_inserter(out), "santral_command_errors_total{{command=\"{}\"}} {}\n",
                   label(spec->name), c.errors);
  family(out, "santral_command_duration_seconds", "histogram",
         "Time from reading a command to writing its reply.");
  for (const auto& [spec, c] : total.commands)
    histogram(out, "santral_command_duration_seconds",
              fmt::format("command=\"{}\"", label(spec->name)), c.latency);
  return out;
}

json shards_json(const ClusterSnapshot& snapshot) {
  json shards = json::array();
  const auto& map = *snapshot.topology->map;
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    const auto& shard = map.shard(s);
    json servers = json::array();
    // Each worker has its own connections; a server is shown as each worker sees it.
    for (std::size_t w = 0; w < snapshot.workers.size(); ++w) {
      const auto& worker = snapshot.workers[w];
      if (s >= worker.servers.size()) continue;
      for (const auto& server : worker.servers[s]) {
        servers.push_back({{"worker", w},
                           {"name", server.name},
                           {"address", server.address},
                           {"role", server.replica ? "replica" : "primary"},
                           {"state", server.state_name()},
                           {"reason", server.reason},
                           {"in_flight", server.in_flight}});
        if (server.replica) {
          servers.back()["reads"] = server.fresh;
          servers.back()["lag_ms"] = server.lag_ms;
          servers.back()["sync"] = server.sync;
        }
      }
    }
    json replicas = json::array();
    for (const auto& r : shard.replicas) replicas.push_back(r.text());
    shards.push_back({{"name", shard.name},
                      {"address", shard.address.text()},
                      {"weight", shard.weight},
                      {"replicas", replicas},
                      {"servers", servers}});
    if (!shard.sentinel_master.empty()) shards.back()["sentinel_master"] = shard.sentinel_master;
    if (auto failover = snapshot.failovers.find(shard.name); failover != snapshot.failovers.end())
      shards.back()["last_failover"] = {{"unix_time", failover->second.unix_time},
                                        {"from", failover->second.from},
                                        {"to", failover->second.to}};
    if (auto lost = snapshot.lost_writes.find(shard.name); lost != snapshot.lost_writes.end()) {
      const auto& report = lost->second;
      shards.back()["lost_writes"] = {
          {"unix_time", report.failover.unix_time},
          {"from", report.failover.from},
          {"to", report.failover.to},
          {"lineage", std::string(lineage_name(report.verdict.lineage))},
          {"writes", std::string(report.writes_name())},
          {"why", report.verdict.why},
          {"read_offset", report.verdict.read_offset},
          {"missing_bytes", report.verdict.missing_bytes},
          {"accepted_unix_time", report.accepted_unix_time}};
    }
  }
  return {{"config_version", snapshot.topology->shown_version()}, {"shards", shards}};
}

json routers_json(const FleetView& fleet) {
  json routers = json::array();
  for (const auto& router : fleet.routers) routers.push_back(router.to_json());
  return {{"in_touch", fleet.in_touch},     {"etcd_member", fleet.member},
          {"last_error", fleet.last_error}, {"lease", std::to_string(fleet.lease)},
          {"silent_ms", fleet.silent_ms},   {"routers", routers}};
}

json config_json(const placement::Topology& topology) {
  const auto& c = *topology.config;
  json shards = json::array();
  for (const auto& s : c.shards) {
    json replicas = json::array();
    for (const auto& r : s.replicas) replicas.push_back(r.text());
    shards.push_back({{"name", s.name},
                      {"address", s.address.text()},
                      {"weight", s.weight},
                      {"replicas", replicas}});
  }
  const char* read_from = config::read_from_name(c.read_from);
  // Passwords and tokens are never shown.
  return {
      {"version", topology.shown_version()},
      {"source", c.source.string()},
      {"listen", c.listen.text()},
      {"workers", c.workers},
      {"hash", c.hash_name},
      {"distribution", config::distribution_name(c.distribution)},
      {"hash_tag", c.hash_tag},
      {"read_from", read_from},
      {"replica_max_lag_ms", c.replica_max_lag.count()},
      {"databases", c.databases},
      {"password_set", !c.password.empty()},
      {"cluster", c.cluster.enabled() ? json{{"name", c.cluster.name},
                                             {"etcd", c.cluster.etcd},
                                             {"lease_ttl_s", c.cluster.lease_ttl.count()}}
                                      : json(nullptr)},
      {"users", c.users.size()},
      {"timeouts",
       {{"connect_ms", c.timeouts.connect.count()},
        {"request_ms", c.timeouts.request.count()},
        {"reconnect_min_ms", c.timeouts.reconnect_min.count()},
        {"reconnect_max_ms", c.timeouts.reconnect_max.count()}}},
      {"health", {{"interval_ms", c.health.interval.count()}, {"failures", c.health.failures}}},
      {"write_concern",
       {{"replicas", c.write_concern.replicas}, {"timeout_ms", c.write_concern.timeout.count()}}},
      {"backend",
       {{"connections_per_shard", c.backend.connections_per_shard},
        {"database", c.backend.database},
        {"username", c.backend.username},
        {"password_set", !c.backend.password.empty()}}},
      {"limits",
       {{"max_clients", c.limits.max_clients},
        {"max_args", c.limits.request.max_args},
        {"max_bulk_bytes", c.limits.request.max_bulk_bytes},
        {"max_inline_bytes", c.limits.request.max_inline_bytes},
        {"max_pending_requests", c.limits.max_pending_requests},
        {"max_output_bytes", c.limits.max_output_bytes},
        {"tracking_table_max_keys", c.limits.tracking_table_max_keys}}},
      {"drain_ms", c.drain.count()},
      {"watch_file", c.watch_file},
      {"shards", shards}};
}

}  // namespace santral::router
