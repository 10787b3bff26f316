#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"
#include "config/topology.h"
#include "router/hotkeys/salting/auto_salt.h"
#include "router/hotkeys/salting/salt_overrides_json.h"
#include "router/process/fleet_start.h"
#include "router/process/sentinel_follow.h"
#include "router/process/worker.h"
#include "router/resharding/fleet_ledger.h"
#include "router/resharding/local_ledger.h"
#include "router/resharding/move_driver.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

class AdminServer;

// How to read the config again on a reload, and what the command line overrides in it.
struct ConfigSource {
  std::filesystem::path path;
  config::ConfigFormat format = config::ConfigFormat::Auto;
  std::string pool;
  std::optional<unsigned> workers;
  std::optional<std::string> log_level;
  std::optional<std::string> listen;
  std::optional<std::string> admin_listen;

  config::Config load() const;  // throws config::ConfigError
  // The same from the file's text, read once, so that the text kept with a move is the text
  // that was loaded.
  std::string read_text() const;
  config::Config parse(const std::string& text) const;  // throws config::ConfigError
};

// Accepts clients and hands each to a worker in turn; owns the control work that is not on
// the request path: signals, reloads, the admin API, graceful shutdown. All of it runs on the
// thread that calls run().
class Server final : public ControlPlane, private MoveHost {
 public:
  // In a fleet, `fleet` holds the link to etcd and the map version the config carries.
  Server(ConfigSource source, config::Config config, FleetStart fleet = {});
  ~Server() override;

  // Serves until SIGINT or SIGTERM; returns the process exit code.
  int run();

  // ControlPlane: SIGHUP, a changed file and SANTRAL RELOAD all end up here.
  void reload(std::function<void(ReloadResult)> done) override;
  void reshard(ReshardVerb verb, std::function<void(ReshardAnswer)> done) override;
  void balance(BalanceRequest request, std::function<void(BalanceAnswer)> done) override;
  void analyze(AnalyzeRequest request, std::function<void(AnalyzeAnswer)> done) override;
  void push_map(std::string text, std::function<void(ReloadResult)> done) override;
  std::optional<FleetAgent::View> fleet_view() const override;
  void share_salting(SaltChange change, std::function<void(std::string)> done) override;

  const std::optional<ReloadRecord>& last_reload() const override { return last_reload_; }

  const std::vector<std::unique_ptr<Worker>>& workers() const { return workers_; }
  std::vector<WorkerServices*> worker_services() const override;
  config::TopologyPtr topology() const override { return topology_; }
  SharedState& shared() override { return shared_; }
  // The text of the config in force (what the last reload that took effect read).
  std::string config_text() const { return local_ ? local_->in_force_text() : last_read_text_; }
  boost::asio::io_context& io() override { return io_; }

 private:
  void reload_now(std::string why, std::function<void(ReloadResult)> done);
  // Any reload: in a fleet the file's settings apply here and its map is proposed to etcd.
  void start_reload(std::string why, std::function<void(ReloadResult)> done);
  void reload_in_fleet(std::string why, std::function<void(ReloadResult)> done);
  // What a reload may not change without a restart, put back to the running values.
  static std::vector<std::string> keep_restart_settings(const config::Config& current,
                                                        config::Config& next);
  // Fleet: proposes `shared_text` (config/shared_map.h) as the next map version.
  void propose_map(const std::string& shared_text, std::function<void(ReloadResult)> done);
  // Fleet: the map in force with its shared part taken from a map read from etcd; an error when
  // it is refused.
  struct FleetMap {
    std::shared_ptr<config::Topology> topology;  // its versions set by the caller
    std::string text;
    std::string naming_text;  // the map salted counters are named by (empty: text)
    std::string pushed_by;
    std::string error;
    bool moves = false;   // built, but it gives keys new owners (error says so)
    bool missed = false;  // its lineage says the fleet went on past this router's map
  };
  FleetMap fleet_map(const std::string& key, const std::string& document) const;
  void take_fleet_map(const EtcdKeyValue& map);
  void take_fleet_salting(const EtcdKeyValue& salting);
  // Fleet: the move document changed in etcd (nullopt: there is none any more).
  void take_fleet_move(const std::optional<EtcdKeyValue>& move);
  // Fleet: a move record (from etcd, or from this router's own write) for the driver, once
  // this router serves the map the move starts from.
  void offer_fleet_move(const std::optional<LedgerMove>& move);
  // The topology of `shared_text` (a map's shared part) with this router's own settings.
  std::shared_ptr<config::Topology> fleet_topology(const std::string& shared_text,
                                                   std::string& error) const;
  // Where the router starts from, alone: the state file's map in force, a move under way, or
  // the file's map; a file whose map differs from the one in force is planned at run().
  void restore_moves(const config::Config& config);
  void check_salt_waiters();
  void put_in_force(config::TopologyPtr topology);
  // Sentinel (server_sentinel.cpp): asks the sentinels about the masters the config in force
  // names, and puts the primary and replicas they elect in force.
  void follow_sentinels();
  void follow_sentinel(const std::string& master, const SentinelView& view);
  // MoveHost (router/resharding/move_driver.h).
  std::uint64_t next_version() override { return ++last_version_; }
  const config::TopologyPtr& serving() const override { return topology_; }
  void switch_topology(config::TopologyPtr topology, std::function<void()> done) override;
  void release_pulls() override;
  MigrationGate& migrations() override { return shared_.migrations; }
  std::shared_ptr<config::Topology> topology_of(const std::string& text,
                                                std::string& error) override;
  std::vector<Worker*> worker_list() const;
  ReloadResult remember_reload(std::string_view why, ReloadResult result);
  void watch_file();
  bool already_read() const;  // the file holds the text the last reload read
  void check_auto_salting();
  void wait_for_signals();
  void begin_shutdown(int signal);
  void fold_run_time_salting();
  void finish_shutdown();
  void accept(boost::asio::ip::tcp::acceptor& acceptor, bool tls);
  void hand_over(boost::asio::ip::tcp::socket socket, bool tls);
  bool open_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                     std::uint16_t port, std::string_view what);

  ConfigSource source_;
  config::TopologyPtr topology_;
  SharedState shared_;
  // Before io_: a connection handed over is posted to a worker's io_context, so the workers
  // must outlive the acceptor's io_context.
  std::vector<std::unique_ptr<Worker>> workers_;
  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::acceptor acceptor_;      // `listen:`, unless TLS only
  boost::asio::ip::tcp::acceptor tls_acceptor_;  // `tls.listen:`
  boost::asio::signal_set signals_;
  boost::asio::steady_timer watch_timer_;
  boost::asio::steady_timer drain_timer_;
  boost::asio::steady_timer auto_salt_timer_;
  AutoSalting auto_salting_;
  std::uint64_t last_version_ = 1;
  // A move's state lives in its ledger: the state file alone, etcd in a fleet.
  std::unique_ptr<LocalLedger> local_;
  std::unique_ptr<FleetLedger> fleet_ledger_;
  std::unique_ptr<MoveDriver> driver_;
  std::string start_error_;               // the router does not start (a bad state file)
  std::optional<LedgerMove> kept_move_;   // alone: the move the state file holds, resumed at run()
  config::TopologyPtr planned_at_start_;  // alone: the file's map, planned as a move at run()
  std::optional<std::filesystem::file_time_type> file_time_;
  std::uintmax_t file_size_ = 0;
  std::string last_read_text_;  // what the last reload (or the start) read from the file
  std::unique_ptr<AdminServer> admin_;
  std::unique_ptr<FleetAgent> fleet_;         // in a fleet (`cluster:`): the link to etcd
  std::unique_ptr<SentinelFollow> sentinel_;  // while the config names a sentinel_master
  bool failover_waits_for_move_ = false;      // logged once per move
  std::string fleet_map_text_;                // the shared part of the map in force (fleet)
  std::string fleet_naming_text_;  // ... of the map salted counters are named by (empty: it)
  std::string file_map_text_;      // the shared part of the file, as last read (fleet)
  // share_salting() calls waiting until every router has acknowledged their salting version.
  struct SaltWaiter {
    std::int64_t version;
    std::function<void(std::string)> done;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<SaltWaiter> salt_waiters_;
  // Fleet: back after its lease expired, it serves again (this) once it serves etcd's map.
  std::function<void()> rejoin_;
  std::optional<EtcdKeyValue> joined_move_;  // the move etcd held at start, taken in run()
  std::optional<LedgerMove> waiting_move_;   // a move from a map this router has not taken yet
  std::optional<ReloadRecord> last_reload_;
  std::size_t next_worker_ = 0;
  bool shutting_down_ = false;
  std::size_t drained_workers_ = 0;
};

// Every shard a request of `topology` may reach (server_fleet.cpp).
std::vector<config::ShardConfig> shards_of(const config::Topology& topology);

}  // namespace santral::router
