#include "app/analyze_cli.h"

#include <iostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/router_link.h"

namespace santral::router {

std::optional<int> run_analyze_command(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "analyze") return std::nullopt;
  CLI::App app{
      "Santral's shard-key analyzer: how a namespace's keys are used, and how each "
      "placement would spread them (SANTRAL ANALYZE)"};
  RouterOptions options;
  std::string target, key, write;
  double seconds = 10, sample = 0.05;
  bool json = false;
  options.add_to(app);
  app.add_option("target", target, "A namespace's name, or a glob of keys")->required();
  app.add_option("--seconds", seconds, "How long live requests are sampled")
      ->check(CLI::Range(0.001, 3600.0));
  app.add_option("--sample", sample, "The share of requests sampled")
      ->check(CLI::Range(0.0001, 1.0));
  app.add_option("-k,--key", key,
                 "A candidate shard key: a field of the namespace's match: pattern, or a regex");
  app.add_flag("--json", json, "Print the report as JSON");
  app.add_option("-w,--write", write, "Save the config with the recommendation applied");
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto endpoint = options.endpoint("santral analyze");
  if (!endpoint) return 2;
  std::string frame;
  try {
    auto link = options.connect(*endpoint);
    std::string seconds_text = fmt::format("{}", seconds), sample_text = fmt::format("{}", sample);
    std::vector<std::string_view> args{"SANTRAL",    "ANALYZE", target,     "SECONDS",
                                       seconds_text, "SAMPLE",  sample_text};
    if (!key.empty()) args.insert(args.end(), {"KEY", key});
    if (json) args.insert(args.end(), {"FORMAT", "json"});
    frame = link->call(args);
  } catch (const std::exception& e) {
    std::cerr << "santral analyze: cannot reach the router at " << options.router << ": "
              << e.what() << "\n";
    return 1;
  }
  int code = print_proposal("santral analyze", frame, write,
                            "push it (santral map push FILE) or put it in place and reload: the "
                            "change is planned as a move");
  if (json) std::cout << "\n";
  return code;
}

}  // namespace santral::router
