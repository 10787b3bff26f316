#include <csignal>
#include <iostream>

#include <spdlog/spdlog.h>

#include "app/analyze_cli.h"
#include "app/balance_cli.h"
#include "app/cli.h"
#include "app/map_cli.h"
#include "app/reshard_cli.h"
#include "config/config_error.h"
#include "router/process/fleet_start.h"
#include "router/process/server.h"

int main(int argc, char** argv) {
  using namespace santral;
  if (auto exit_code = router::run_reshard_command(argc, argv)) return *exit_code;
  if (auto exit_code = router::run_balance_command(argc, argv)) return *exit_code;
  if (auto exit_code = router::run_analyze_command(argc, argv)) return *exit_code;
  if (auto exit_code = router::run_map_command(argc, argv)) return *exit_code;
  router::CommandLine options;
  if (auto exit_code = router::parse_command_line(argc, argv, options)) return *exit_code;

  router::ConfigSource source{options.config_path,  options.format,    options.pool,
                              options.workers,      options.log_level, options.listen,
                              options.admin_listen, options.announce};
  config::Config config;
  try {
    config = source.load();
  } catch (const config::ConfigError& e) {
    std::cerr << "santral: invalid config: " << e.what() << "\n";
    return 1;
  }

  if (options.check_only) {
    std::cout << "config OK: " << config.source.string() << ": listen " << config.listen.text()
              << ", " << config.workers << " workers, " << config.shards.size() << " shards ("
              << config.hash_name << ")";
    if (!config.namespaces.empty()) std::cout << ", " << config.namespaces.size() << " namespaces";
    std::cout << "\n";
    for (const auto& warning : config.warnings) std::cout << "warning: " << warning << "\n";
    return 0;
  }

  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  std::signal(SIGPIPE, SIG_IGN);
  router::FleetStart fleet;
  if (config.cluster.enabled()) {
    try {
      fleet = router::join_fleet(source, std::move(config));
    } catch (const router::FleetJoinFailed& e) {
      spdlog::critical("{}", e.what());
      return 1;
    } catch (const config::ConfigError& e) {
      spdlog::critical("{}", e.what());
      return 1;
    }
    config = std::move(fleet.config);
  }
  router::Server server(std::move(source), std::move(config), std::move(fleet));
  return server.run();
}
