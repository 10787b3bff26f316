#include "app/map_cli.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <CLI/CLI.hpp>

#include "app/router_link.h"
#include "protocol/reply_value.h"

namespace santral::router {

std::optional<int> run_map_command(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "map") return std::nullopt;
  CLI::App app{"The shard map of a fleet of routers, proposed through a running router"};
  RouterOptions options;
  std::string verb, file;
  app.add_option("verb", verb, "push")->required()->check(CLI::IsMember({"push"}));
  app.add_option("file", file, "A Santral config file; its shard map is proposed")
      ->required()
      ->check(CLI::ExistingFile);
  options.add_to(app);
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::cerr << "santral map push: cannot read " << file << "\n";
    return 1;
  }
  auto endpoint = options.endpoint("santral map push");
  if (!endpoint) return 2;
  try {
    auto link = options.connect(*endpoint);
    std::string frame = link->call({"SANTRAL", "MAP", "PUSH", text});
    protocol::ReplyValue reply;
    if (!protocol::parse_reply(frame, reply)) throw std::runtime_error("not a RESP reply");
    if (reply.is_error()) {
      std::cerr << "santral map push " << file << ": " << reply.text << "\n";
      return 1;
    }
    std::cout << reply.text << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "santral map push: cannot reach the router at " << options.router << ": "
              << e.what() << "\n";
    return 1;
  }
}

}  // namespace santral::router
