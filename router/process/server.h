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
#include "router/process/control_plane.h"
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
  Server(ConfigSource source, config::Config config);
  ~Server() override;

  // Serves until SIGINT or SIGTERM; returns the process exit code.
  int run();

  // ControlPlane: SIGHUP, a changed file and SANTRAL RELOAD all end up here.
  void reload(std::function<void(ReloadResult)> done) override;
  void reshard(ReshardVerb verb, std::function<void(ReshardAnswer)> done) override;
  void balance(BalanceRequest request, std::function<void(BalanceAnswer)> done) override;

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
  std::optional<ReloadRecord> last_reload_;
  std::size_t next_worker_ = 0;
  bool shutting_down_ = false;
  std::size_t drained_workers_ = 0;
};

}  // namespace santral::router
