#include "router/process/balance_run.h"

#include <chrono>
#include <memory>

#include <boost/asio/steady_timer.hpp>

#include "config/balance/proposer.h"
#include "router/admin/cluster_snapshot.h"
#include "router/balance/balance_proposal.h"
#include "router/balance/live_units.h"
#include "router/hotkeys/detection/hot_key_report.h"
#include "router/process/server.h"
#include "router/resharding/shard_sampler.h"

namespace santral::router {

namespace {

using Clock = std::chrono::steady_clock;

// Requests to each shard in `stats`, its primary's and its replicas' ("name@replica").
std::vector<double> requests_per_shard(const placement::ShardMap& map, const WorkerStats& stats) {
  std::vector<double> out(map.placed_count(), 0);
  for (const auto& [name, shard_stats] : stats.shards)
    for (std::size_t s = 0; s < out.size(); ++s) {
      const std::string& shard = map.shard(s).name;
      if (name == shard ||
          (name.size() > shard.size() && name.starts_with(shard) && name[shard.size()] == '@'))
        out[s] += static_cast<double>(shard_stats.requests);
    }
  return out;
}

struct BalanceRun : std::enable_shared_from_this<BalanceRun> {
  BalanceRun(Server& server, ControlPlane::BalanceRequest request,
             std::function<void(ControlPlane::BalanceAnswer)> done)
      : server(server),
        request(std::move(request)),
        done(std::move(done)),
        topology(server.topology()),
        timer(server.io()) {}

  Server& server;
  ControlPlane::BalanceRequest request;
  std::function<void(ControlPlane::BalanceAnswer)> done;
  placement::TopologyPtr topology;
  boost::asio::steady_timer timer;
  std::vector<double> requests_before;
  Clock::time_point started;
  std::vector<ShardSample> samples;
  std::size_t waiting = 2;  // the sample and the window

  void start() {
    auto self = shared_from_this();
    take_snapshot(server, [self](const ClusterSnapshot& first) {
      self->requests_before = requests_per_shard(*self->topology->map, first.total);
      self->started = Clock::now();
      std::vector<std::size_t> shards;
      for (std::size_t s = 0; s < self->topology->map->placed_count(); ++s) shards.push_back(s);
      sample_shards(self->server.io(), self->topology, shards, self->request.samples,
                    [self](std::vector<ShardSample> samples) {
                      self->samples = std::move(samples);
                      self->one_done();
                    });
      self->timer.expires_after(std::chrono::milliseconds(self->request.window_ms));
      self->timer.async_wait([self](boost::system::error_code) { self->one_done(); });
    });
  }

  void one_done() {
    if (--waiting > 0) return;
    auto self = shared_from_this();
    take_snapshot(server, [self](const ClusterSnapshot& second) {
      double seconds = std::chrono::duration<double>(Clock::now() - self->started).count();
      auto after = requests_per_shard(*self->topology->map, second.total);
      std::vector<ShardMeasure> measures;
      for (auto& sample : self->samples) {
        double ops = 0;
        if (sample.shard < after.size() && seconds > 0)
          ops = (after[sample.shard] - self->requests_before[sample.shard]) / seconds;
        measures.push_back({std::move(sample), std::max(0.0, ops)});
      }
      collect_hot_keys(self->server.worker_services(), self->server.io(),
                       [self, seconds, measures = std::move(measures)](auto rates) {
                         std::vector<HotKeyMeasure> hot;
                         for (const auto& rate : rates)
                           if (rate.salts == 0 && rate.ops > 0) hot.push_back({rate.key, rate.ops});
                         self->propose(seconds, measures, hot);
                       });
    });
  }

  void propose(double seconds, const std::vector<ShardMeasure>& measures,
               const std::vector<HotKeyMeasure>& hot) {
    const auto& config = *topology->config;
    const auto& map = *topology->map;
    BalanceMeasure measure;
    measure.metric = *metric_named(request.by);
    measure.window_s = seconds;
    measure.samples = request.samples;
    for (const auto& shard : measures) {
      measure.ops_total += shard.ops_per_sec;
      if (!shard.sample.answered)
        measure.unanswered.push_back(map.shard(shard.sample.shard).name + ": " +
                                     shard.sample.error);
    }
    if (measure.metric == BalanceMetric::Ops && measure.ops_total <= 0) {
      measure.metric = BalanceMetric::Keys;
      measure.metric_fell_back = true;
    }
    auto units = live_units(config, map, measures, hot, measure.metric);
    auto proposal =
        balance::propose_balance(units.units, {map.placed_count(), request.target_ratio});
    ControlPlane::BalanceAnswer answer;
    answer.report = describe_balance(config, proposal, units, measure, request.target_ratio);
    auto proposed = proposed_namespaces(config, proposal, units);
    if (!proposed.empty())
      answer.config_text = proposed_config_text(server.config_text(), config, proposed);
    done(std::move(answer));
  }
};

}  // namespace

void run_balance(Server& server, ControlPlane::BalanceRequest request,
                 std::function<void(ControlPlane::BalanceAnswer)> done) {
  std::make_shared<BalanceRun>(server, std::move(request), std::move(done))->start();
}

}  // namespace santral::router
