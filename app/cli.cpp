#include "app/cli.h"

#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "santral/version.h"

namespace santral::router {

std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out) {
  CLI::App app{
      "santral: a sharding router for Redis-protocol databases.\n"
      "Clients connect to it as to one Redis server; it sends each key to the shard "
      "that owns it."};
  app.set_version_flag("-V,--version", std::string("santral ") + kVersion);
  std::string check_path;
  auto* config_opt =
      app.add_option("-c,--config", out.config_path,
                     "Serve with this config (Santral YAML or twemproxy's nutcracker.yml)");
  auto* check_opt =
      app.add_option("-t,--check-config", check_path,
                     "Validate this config, print a summary and exit (non-zero on error)");
  config_opt->excludes(check_opt);
  std::map<std::string, config::ConfigFormat> formats = {
      {"auto", config::ConfigFormat::Auto},
      {"santral", config::ConfigFormat::Santral},
      {"twemproxy", config::ConfigFormat::Twemproxy}};
  app.add_option("--format", out.format, "Config format; auto detects a nutcracker.yml")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case))
      ->default_str("auto");
  app.add_option("--pool", out.pool, "Which pool of a twemproxy config with several to serve");
  app.add_option("-l,--log-level", out.log_level,
                 "trace, debug, info, warn, error, critical or off (overrides the config)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option(
      "--listen", out.listen,
      "Address to serve on, host:port (overrides the config; lets two routers share one)");
  app.add_option("--admin-listen", out.admin_listen,
                 "Address of the admin HTTP API, host:port (overrides the config)");
  app.add_option("--announce", out.announce,
                 "Where clients reach this router, host:port, as the cluster endpoint and the "
                 "fleet report it (overrides the config; e.g. a pod's IP)");
  app.add_option("--workers", out.workers, "Worker threads (overrides the config)")
      ->check(CLI::Range(1u, 1024u));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!check_path.empty()) {
    out.config_path = check_path;
    out.check_only = true;
  }
  if (out.config_path.empty()) {
    std::cerr << "santral: no config given; run with --config FILE (see --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace santral::router
