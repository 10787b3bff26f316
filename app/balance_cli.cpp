#include "app/balance_cli.h"

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "app/router_link.h"
#include "config/config.h"

namespace santral::router {

std::optional<int> run_balance_command(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "balance") return std::nullopt;
  CLI::App app{"Santral's balancer: a plan that evens out the shards, for the operator to approve"};
  RouterOptions options;
  std::string by = "ops", write;
  double ratio = 1.2;
  unsigned samples = 400, window = 1000;
  options.add_to(app);
  app.add_option("--by", by, "What to even out: ops (requests/s), keys or bytes")
      ->check(CLI::IsMember({"ops", "keys", "bytes"}));
  app.add_option("--ratio", ratio, "The busiest shard's load over the mean, at most")
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--samples", samples, "RANDOMKEY draws per shard")->check(CLI::Range(1, 100000));
  app.add_option("--window", window, "Milliseconds over which requests are counted")
      ->check(CLI::Range(0, 60000));
  app.add_option("-w,--write", write, "Save the proposed config to this file");
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto endpoint = options.endpoint("santral balance");
  if (!endpoint) return 2;
  std::string frame;
  try {
    auto link = options.connect(*endpoint);
    std::string ratio_text = std::to_string(ratio), samples_text = std::to_string(samples),
                window_text = std::to_string(window);
    frame = link->call({"SANTRAL", "BALANCE", "PLAN", "BY", by, "RATIO", ratio_text, "SAMPLES",
                        samples_text, "WINDOW", window_text});
  } catch (const std::exception& e) {
    std::cerr << "santral balance: cannot reach the router at " << options.router << ": "
              << e.what() << "\n";
    return 1;
  }
  return print_proposal("santral balance", frame, write,
                        "put it in place of the config and reload to plan the move");
}

}  // namespace santral::router
