#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"
#include "placement/topology.h"
#include "router/process/client_listeners.h"
#include "router/process/config_reloads.h"
#include "router/process/config_source.h"
#include "router/process/fleet_start.h"
#include "router/process/fleet_sync.h"
#include "router/process/run_time_salting.h"
#include "router/process/sentinel_failover.h"
#include "router/process/shutdown.h"
#include "router/process/worker.h"
#include "router/resharding/fleet_ledger.h"
#include "router/resharding/local_ledger.h"
#include "router/resharding/local_start.h"
#include "router/resharding/migration_gate.h"
#include "router/resharding/move_driver.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

class AdminServer;

// Accepts clients and hands each to a worker in turn; owns the control work that is not on
// the request path: signals, reloads, the admin API, graceful shutdown. All of it runs on the
// thread that calls run().
class Server final : public ControlPlane, private MoveHost, private RouterHost {
 public:
  // In a fleet, `fleet` holds the link to etcd and the map version the config carries.
  Server(ConfigSource source, config::Config config, FleetStart fleet = {});
  ~Server() override;

  // Serves until SIGINT or SIGTERM; returns the process exit code.
  int run();

  // ControlPlane. reload(): SANTRAL RELOAD, POST /reload (SIGHUP and a changed file reach
  // ConfigReloads).
  void reload(AuditActor who, std::function<void(ReloadResult)> done) override;
  void reshard(ReshardVerb verb, AuditActor who, std::function<void(ReshardAnswer)> done) override;
  void accept_failover(std::string shard, AuditActor who,
                       std::function<void(FailoverAnswer)> done) override;
  void balance(BalanceRequest request, std::function<void(BalanceAnswer)> done) override;
  void analyze(AnalyzeRequest request, std::function<void(AnalyzeAnswer)> done) override;
  void push_map(std::string text, AuditActor who, std::function<void(ReloadResult)> done) override;
  std::optional<FleetView> fleet_view() const override;
  std::optional<Unready> unready() const override;
  void share_salting(SaltChange change, std::function<void(std::string)> done) override;

  const std::optional<ReloadRecord>& last_reload() const override { return reloads_->last(); }

  const std::vector<std::unique_ptr<Worker>>& workers() const { return workers_; }
  std::vector<WorkerServices*> worker_services() const override;
  placement::TopologyPtr topology() const override { return topology_; }
  SharedState& shared() override { return shared_; }
  // The text of the config in force (what the last reload that took effect read).
  std::string config_text() const {
    return local_ ? local_->in_force_text() : reloads_->last_read_text();
  }
  boost::asio::io_context& io() override { return io_; }

 private:
  // RouterHost (router/process/fleet_sync.h).
  void put_in_force(placement::TopologyPtr topology) override;
  void barrier_all(std::function<void()> done) override;
  // MoveHost (router/resharding/move_driver.h).
  std::uint64_t next_version() override { return ++last_version_; }
  const placement::TopologyPtr& serving() const override { return topology_; }
  void switch_topology(placement::TopologyPtr topology, std::function<void()> done) override;
  void release_pulls() override;
  void end_earlier_runs_first();
  void after_earlier_runs(std::function<void()> then);
  MigrationGate& migrations() override { return migrations_; }
  std::shared_ptr<placement::Topology> topology_of(const std::string& text,
                                                   std::string& error) override;
  std::vector<Worker*> worker_list() const;
  ReloadResult remember_reload(std::string_view why, ReloadResult result) override;
  void every_second();
  void stop_taking_work();
  void audit_move(ReshardVerb verb, const AuditActor& who, const std::string& error,
                  const ReshardStatus& status);

  ConfigSource source_;
  placement::TopologyPtr topology_;
  SharedState shared_;
  // Every MIGRATE of this process waits here while it would make a cycle: the walk's, and the
  // pulls of every worker (WorkerServices::migrations()).
  MigrationGate migrations_;
  std::unique_ptr<AuditLog> audit_;  // `audit:`; shared_.audit points to it
  std::string audit_error_;          // the audit log asked for cannot be opened
  // Before io_: a connection handed over is posted to a worker's io_context, so the workers
  // must outlive the acceptor's io_context.
  std::vector<std::unique_ptr<Worker>> workers_;
  boost::asio::io_context io_{1};
  ClientListeners listeners_;
  boost::asio::steady_timer watch_timer_;
  RunTimeSalting salting_;
  std::uint64_t last_version_ = 1;
  // A move's state lives in its ledger: the state file alone, etcd in a fleet. Before
  // driver_, which uses the ledger.
  std::unique_ptr<LocalLedger> local_;
  std::unique_ptr<FleetSync> fleet_;  // in a fleet (`cluster:`): etcd's maps, moves, salting
  std::unique_ptr<MoveDriver> driver_;
  std::string start_error_;         // the router does not start (a bad state file)
  bool earlier_runs_ended_ = true;  // end_earlier_runs_first()
  std::vector<std::function<void()>> after_earlier_runs_;
  std::optional<LedgerMove> kept_move_;  // alone: the move the state file holds, resumed at run()
  placement::TopologyPtr planned_at_start_;  // alone: the file's map, planned as a move at run()
  std::unique_ptr<ConfigReloads> reloads_;
  std::unique_ptr<AdminServer> admin_;
  SentinelFailover sentinel_;
  std::unique_ptr<Shutdown> shutdown_;
};

}  // namespace santral::router
