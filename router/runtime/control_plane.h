#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "router/analysis/shard_key_analysis.h"
#include "router/runtime/audit_log.h"
#include "router/runtime/shared_state.h"
#include "router/status/fleet_view.h"
#include "router/status/reshard_state.h"

namespace santral::router {

struct SaltChange;  // router/hotkeys/salting/salt_overrides_json.h
class WorkerServices;

// What a worker may ask of the server as a whole: reload the config, or the topology in use.
// Implemented by Server; runs on the server's own thread.
class ControlPlane {
 public:
  struct ReloadResult {
    bool ok;
    std::string message;  // the change summary, or the config error (file:line: key: ...)
  };

  virtual ~ControlPlane() = default;

  // The server's own event loop: every callback of this interface runs on it.
  virtual boost::asio::io_context& io() = 0;
  // The topology in force, and what every worker shares.
  virtual placement::TopologyPtr topology() const = 0;
  virtual SharedState& shared() = 0;
  // Every worker, as the services routes and features see (for fan_out from the server).
  virtual std::vector<WorkerServices*> worker_services() const = 0;
  // The last reload's outcome, for the admin API (nullopt: none since start).
  struct ReloadRecord {
    ReloadResult result;
    std::string trigger;  // "SIGHUP", "SANTRAL RELOAD", "the file changed"
    std::chrono::system_clock::time_point at;
  };
  virtual const std::optional<ReloadRecord>& last_reload() const = 0;
  // Reloads the config file; `done` runs on the server's thread with the outcome. `who`
  // asked (SANTRAL RELOAD, POST /reload): the audit log names them.
  virtual void reload(AuditActor who, std::function<void(ReloadResult)> done) = 0;

  // SANTRAL MAP PUSH (santral map push FILE): proposes the map of `text`, a config file's
  // text, as the fleet's next map version; `done` runs once etcd has taken it or refused.
  virtual void push_map(std::string text, AuditActor who,
                        std::function<void(ReloadResult)> done) = 0;
  // SANTRAL ROUTERS / GET /routers: the fleet as this router last read it from etcd; nullopt
  // outside a fleet. Safe from any thread.
  virtual std::optional<FleetView> fleet_view() const = 0;

  // Run-time salting in a fleet (SANTRAL SALT/UNSALT, automatic): makes `change` on the
  // fleet's salting in etcd and waits until every live router routes by it, with what it sent
  // before answered. `done(error)` runs on the server's thread; at once with "" outside a fleet.
  virtual void share_salting(SaltChange change, std::function<void(std::string)> done) = 0;

  // GET /readyz: why this router must not be sent new clients now, whatever its shards say
  // (router/admin/health_probes.h asks them next): draining at SIGTERM, out of touch with its
  // fleet, refusing or behind the fleet's map. nullopt when nothing of the process stands in
  // the way.
  struct Unready {
    std::string status;  // draining, out_of_touch, refusing_map, map_behind
    std::string reason;  // from the error table (protocol/errors.h, Probe...)
  };
  virtual std::optional<Unready> unready() const = 0;

  // SANTRAL FAILOVER ACCEPT <shard>: after a failover that lost writes, the operator takes
  // the loss and writes to the shard go again (router/process/sentinel_failover.h). `done`
  // runs on the server's thread once every worker has been told.
  struct FailoverAnswer {
    std::string error;  // for the client; empty on success
    std::string said;   // what changed, on success
  };
  virtual void accept_failover(std::string shard, AuditActor who,
                               std::function<void(FailoverAnswer)> done) = 0;

  // SANTRAL RESHARD / GET /reshard: the move's state, after approving or aborting it.
  enum class ReshardVerb { Plan, Approve, Status, Abort };
  struct ReshardAnswer {
    std::string error;  // for the client; empty on success
    ReshardStatus status;
  };
  // Approve and Abort are written to the audit log as `who`'s.
  virtual void reshard(ReshardVerb verb, AuditActor who,
                       std::function<void(ReshardAnswer)> done) = 0;

  // SANTRAL BALANCE PLAN: measures the shards and proposes moves; nothing is applied.
  struct BalanceRequest {
    std::string by = "ops";     // ops, keys or bytes: what is evened out
    double target_ratio = 1.2;  // the busiest shard's load over the mean, at most
    unsigned samples = 400;     // RANDOMKEY draws per shard
    unsigned window_ms = 1000;  // requests per shard are counted over this long
  };
  struct BalanceAnswer {
    std::string error;        // for the client; empty on success
    std::string report;       // what was measured and what the plan does
    std::string config_text;  // the config with the plan carried out; empty: nothing to do
  };
  virtual void balance(BalanceRequest request, std::function<void(BalanceAnswer)> done) = 0;

  // SANTRAL ANALYZE: samples requests (in a fleet, every router's) and the shards' keys for
  // `seconds`, then analyzes them; nothing is changed.
  struct AnalyzeRequest {
    AnalysisTarget target;
    double seconds = 10;
    double rate = 0.05;    // the share of requests sampled
    unsigned draws = 200;  // RANDOMKEY draws per shard
    bool raw = false;      // a fleet peer's part: only this router's sampled requests
  };
  struct AnalyzeAnswer {
    std::string error;  // for the client; empty on success
    AnalysisReport report;
    std::string config_text;  // the config file with the recommendation applied; may be empty
    std::vector<SampledRequest> raw;  // AnalyzeRequest::raw: what this router sampled
  };
  virtual void analyze(AnalyzeRequest request, std::function<void(AnalyzeAnswer)> done) = 0;
};

}  // namespace santral::router
