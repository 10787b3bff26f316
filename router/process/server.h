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
#include "router/cluster/move_document.h"
#include "router/hotkeys/salting/auto_salt.h"
#include "router/process/control_plane.h"
#include "router/process/fleet_start.h"
#include "router/process/shared_state.h"
#include "router/process/worker.h"
#include "router/resharding/resharding.h"

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
class Server final : public ControlPlane, private TopologyHost {
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
  void push_map(std::string text, std::function<void(ReloadResult)> done) override;
  std::optional<FleetAgent::View> fleet_view() const override;
  void share_salting(SaltChange change, std::function<void(std::string)> done) override;

  // The last reload's outcome, for the admin API (nullopt: none since start).
  struct ReloadRecord {
    ReloadResult result;
    std::string trigger;  // "SIGHUP", "SANTRAL RELOAD", "the file changed"
    std::chrono::system_clock::time_point at;
  };
  const std::optional<ReloadRecord>& last_reload() const { return last_reload_; }

  const std::vector<std::unique_ptr<Worker>>& workers() const { return workers_; }
  config::TopologyPtr topology() const { return topology_; }
  SharedState& shared() { return shared_; }
  // The text of the config in force (what the last reload that took effect read).
  const std::string& config_text() const { return resharding_.in_force_text(); }
  boost::asio::io_context& io() { return io_; }

 private:
  ReloadResult reload_now(std::string_view why);
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
    std::string pushed_by;
    std::string error;
    bool moves = false;  // built, but it gives keys new owners (error says so)
  };
  FleetMap fleet_map(const std::string& key, const std::string& document) const;
  void take_fleet_map(const EtcdKeyValue& map);
  void take_fleet_salting(const EtcdKeyValue& salting);
  // Fleet moves (server_fleet_move.cpp).
  void propose_move(const std::string& to_text, std::function<void(ReloadResult)> done);
  void take_fleet_move(const std::optional<EtcdKeyValue>& move);
  void coordinate(bool mine);
  void drive_move();
  void move_walked(std::uint64_t epoch);
  void fleet_reshard(ReshardVerb verb, std::function<void(ReshardAnswer)> done);
  ReshardStatus fleet_move_status() const;
  void end_fleet_move();
  void take_fleet_move_release();
  // The topology of `shared_text` (a map's shared part) with this router's own settings.
  std::shared_ptr<config::Topology> fleet_topology(const std::string& shared_text,
                                                   std::string& error) const;
  void check_salt_waiters();
  void put_in_force(config::TopologyPtr topology);
  // TopologyHost (router/resharding/resharding.h).
  std::uint64_t next_version() override { return ++last_version_; }
  void switch_topology(config::TopologyPtr topology, std::function<void()> done) override;
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
  Resharding resharding_;
  std::optional<std::filesystem::file_time_type> file_time_;
  std::uintmax_t file_size_ = 0;
  std::string last_read_text_;  // what the last reload (or the start) read from the file
  std::unique_ptr<AdminServer> admin_;
  std::unique_ptr<FleetAgent> fleet_;  // in a fleet (`cluster:`): the link to etcd
  std::string fleet_map_text_;         // the shared part of the map in force (fleet)
  std::string file_map_text_;          // the shared part of the file, as last read (fleet)
  // share_salting() calls waiting until every router has acknowledged their salting version.
  struct SaltWaiter {
    std::int64_t version;
    std::function<void(std::string)> done;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<SaltWaiter> salt_waiters_;
  // A move across the fleet, as etcd last said and as this router carries it out.
  struct FleetMove {
    std::optional<MoveDocument> document;  // nullopt: no move
    std::int64_t revision = 0;             // the document's mod_revision
    std::int64_t id = 0;                   // its create_revision: which move it is
    config::TopologyPtr from, to;          // the maps the keys leave and reach
    config::TopologyPtr moving;            // in force for `switched` (either direction)
    std::uint64_t applied = 0;             // the epoch whose topology this router has taken
    std::uint64_t switched = 0;            // ... and waited out its requests routed before
    std::uint64_t released = 0;            // the epoch whose pulls run here
    bool coordinating = false;             // this router drives it (the walk, the ends)
    bool ending = false;                   // the coordinator's last write is on its way
    std::uint64_t asked_release = 0;       // the epoch whose release is on its way
    std::uint64_t walked = 0;              // the epoch whose walk is done
    std::unique_ptr<Mover> mover;          // the coordinator's walk
    std::uint64_t mover_epoch = 0;
    std::chrono::steady_clock::time_point started{};  // when this router first switched
    std::vector<UnitProgress> estimates;              // what sampling the sources found, per unit
    std::function<void()> stop_sampling;
  };
  FleetMove fleet_move_;
  bool fleet_move_coordinating_ = false;     // what the agent last said
  ReshardStatus fleet_last_move_;            // how the last move ended, for STATUS once idle
  std::optional<EtcdKeyValue> joined_move_;  // the move etcd held at start, taken in run()
  std::optional<ReloadRecord> last_reload_;
  std::size_t next_worker_ = 0;
  bool shutting_down_ = false;
  std::size_t drained_workers_ = 0;
};

}  // namespace santral::router
