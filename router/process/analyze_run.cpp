#include "router/process/analyze_run.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <span>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/namespace/table_yaml.h"
#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/analysis/raw_samples.h"
#include "router/cluster/router_call.h"
#include "router/process/server.h"
#include "router/resharding/shard_calls.h"
#include "router/resharding/shard_sampler.h"
#include "router/runtime/fan_out.h"
#include "router/status/router_record.h"

namespace santral::router {

namespace {

using Clock = std::chrono::steady_clock;

// A peer that has not answered this long after its window should have closed is left out.
constexpr auto kPeerGrace = std::chrono::seconds(10);

struct AnalyzeRun : std::enable_shared_from_this<AnalyzeRun> {
  AnalyzeRun(Server& server, ControlPlane::AnalyzeRequest request,
             std::function<void(ControlPlane::AnalyzeAnswer)> done)
      : server(server),
        request(std::move(request)),
        done(std::move(done)),
        topology(server.topology()),
        window(server.io()) {}

  Server& server;
  ControlPlane::AnalyzeRequest request;
  std::function<void(ControlPlane::AnalyzeAnswer)> done;
  placement::TopologyPtr topology;
  boost::asio::steady_timer window;
  AnalysisSamples samples;
  std::size_t waiting = 0;  // the window, the draws and each peer asked
  Clock::time_point started;

  void start() {
    std::uint32_t every = static_cast<std::uint32_t>(std::max(1.0, std::round(1 / request.rate)));
    std::uint32_t idle = 0;
    if (!server.shared().analysis_every.compare_exchange_strong(idle, every))
      return done({protocol::error_message(protocol::ClientError::AnalyzeBusy), {}, {}, {}});
    auto self = shared_from_this();
    started = Clock::now();
    samples.rate = 1.0 / every;
    samples.routers.push_back(own_record(*topology->config).name);
    waiting = 1;  // the window
    if (!request.raw) ask_peers();
    window.expires_after(std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(request.seconds)));
    window.async_wait([self](boost::system::error_code) { self->close_window(); });
  }

  // In a fleet, every other live router samples its own requests over the same window.
  void ask_peers() {
    auto view = server.fleet_view();
    if (!view) return;
    auto self = shared_from_this();
    const std::string own = samples.routers.front();
    std::string password = topology->config->password;
    for (const auto& router : view->routers) {
      if (router.name == own || router.leaving) continue;
      config::Endpoint endpoint;
      const std::string& address = router.announce.empty() ? router.listen : router.announce;
      if (!config::parse_endpoint(address, endpoint)) {
        samples.missing.push_back(
            fmt::format("router {}: its address '{}' is not host:port", router.name, address));
        continue;
      }
      ++waiting;
      std::vector<std::string> requests;
      if (!password.empty()) requests.push_back(command_bytes({"AUTH", password}));
      requests.push_back(command_bytes({"SANTRAL", "ANALYZE", request.target.target, "SECONDS",
                                        fmt::format("{}", request.seconds), "SAMPLE",
                                        fmt::format("{}", request.rate), "RAW"}));
      // It answers once its own window is over; one that has not within the grace period after
      // that is left out, named in the report.
      auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::duration<double>(request.seconds) + kPeerGrace);
      call_router(server.io(), endpoint, std::move(requests), timeout,
                  [self, name = router.name](const std::string& frame, std::string error) {
                    std::vector<SampledRequest> got;
                    if (error.empty()) read_raw_samples(frame, got, error);
                    self->peer_answered(name, std::move(got), error);
                  });
    }
  }

  void peer_answered(const std::string& name, std::vector<SampledRequest> got,
                     const std::string& error) {
    if (!error.empty()) {
      samples.missing.push_back(fmt::format("router {}: {}", name, error));
    } else {
      samples.routers.push_back(name);
      for (auto& s : got) samples.requests.push_back(std::move(s));
    }
    one_done();
  }

  void close_window() {
    server.shared().analysis_every.store(0);
    samples.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (!request.raw) draw_stored_keys();
    std::vector<Worker*> workers;
    for (const auto& worker : server.workers()) workers.push_back(worker.get());
    auto self = shared_from_this();
    fan_out<std::vector<SampledRequest>, Worker>(
        server.io(), workers, [](Worker& worker) { return worker.sampler().take(); },
        [self](std::vector<std::vector<SampledRequest>> taken) {
          for (auto& worker : taken)
            for (auto& s : worker) self->samples.requests.push_back(std::move(s));
          self->one_done();
        });
  }

  // The shards' keys as they are once the window is over (keys written in it included).
  void draw_stored_keys() {
    ++waiting;
    auto self = shared_from_this();
    std::vector<std::size_t> shards;
    for (std::size_t s = 0; s < topology->map->placed_count(); ++s) shards.push_back(s);
    sample_shards(server.io(), topology, shards, request.draws,
                  [self](std::vector<ShardSample> drawn) {
                    for (auto& shard : drawn) {
                      if (shard.draws.empty()) continue;
                      double weight =
                          static_cast<double>(shard.keys) / static_cast<double>(shard.draws.size());
                      for (auto& key : shard.draws)
                        self->samples.stored.push_back({std::move(key.key), weight, key.bytes});
                    }
                    self->one_done();
                  });
  }

  void one_done() {
    if (--waiting == 0) finish();
  }

  void finish() {
    ControlPlane::AnalyzeAnswer answer;
    if (request.raw) {
      answer.raw = std::move(samples.requests);
      return done(std::move(answer));
    }
    const auto& config = *topology->config;
    try {
      answer.report = analyze(config, *topology->map, request.target, samples);
    } catch (const std::invalid_argument& e) {
      answer.error = protocol::error_message(protocol::ClientError::AnalyzeTarget, e.what());
      return done(std::move(answer));
    }
    if (answer.report.recommended && !answer.report.config_lines.empty())
      answer.config_text = config::with_tables(
          server.config_text(), config,
          std::span(&answer.report.whatifs[*answer.report.recommended].table, 1),
          config::TableScope::Placement);
    spdlog::info("SANTRAL ANALYZE {}: {} requests sampled ({} routers), {} keys drawn; {}",
                 request.target.target, answer.report.sampled, answer.report.routers.size(),
                 answer.report.stored, answer.report.recommendation);
    done(std::move(answer));
  }
};

}  // namespace

void run_analysis(Server& server, ControlPlane::AnalyzeRequest request,
                  std::function<void(ControlPlane::AnalyzeAnswer)> done) {
  std::make_shared<AnalyzeRun>(server, std::move(request), std::move(done))->start();
}

}  // namespace santral::router
