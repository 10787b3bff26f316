#include "app/reshard_cli.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/router_link.h"
#include "config/config.h"
#include "protocol/reply_value.h"

namespace santral::router {

namespace {

std::map<std::string, std::string> status_map(const protocol::ReplyValue& reply) {
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
    fields[std::string(reply.elements[i].text)] = std::string(reply.elements[i + 1].text);
  return fields;
}

std::string progress_line(std::map<std::string, std::string>& status) {
  auto number = [&status](const std::string& name) {
    try {
      return std::stod(status[name]);
    } catch (const std::exception&) {
      return 0.0;
    }
  };
  double estimated = number("keys_estimated"), moved = number("keys_moved");
  double share = estimated > 0 ? std::min(1.0, moved / estimated) : 0;
  if (status["state"] == "idle") share = 1;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(std::lround(share * kWidth));
  return fmt::format(
      "[{}{}] {:3.0f}%  {:<9} units {}/{}  keys {:.0f}/~{:.0f}  {:.0f} keys/s  eta {:.0f}s"
      "  errors {}{}",
      std::string(filled, '#'), std::string(kWidth - filled, '.'), share * 100, status["state"],
      status["units_done"], status["units_total"], moved, estimated, number("keys_per_sec"),
      number("eta_s"), status["errors"],
      status["last_error"].empty() ? "" : " (" + status["last_error"] + ")");
}

}  // namespace

std::optional<int> run_reshard_command(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "reshard") return std::nullopt;
  CLI::App app{"Santral's online resharding, asked of a running router"};
  RouterOptions options;
  std::string verb;
  bool watch = false;
  app.add_option("verb", verb, "plan, approve, status or abort")
      ->required()
      ->check(CLI::IsMember({"plan", "approve", "status", "abort"}));
  options.add_to(app);
  app.add_flag("-w,--watch", watch, "With status: redraw a progress bar until the move ends");
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto endpoint = options.endpoint("santral reshard");
  if (!endpoint) return 2;
  try {
    auto link = options.connect(*endpoint);
    std::string upper = verb;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (;;) {
      std::string frame = link->call({"SANTRAL", "RESHARD", upper});
      protocol::ReplyValue reply;
      if (!protocol::parse_reply(frame, reply)) throw std::runtime_error("not a RESP reply");
      if (reply.is_error()) {
        std::cerr << "santral reshard " << verb << ": " << reply.text << "\n";
        return 1;
      }
      if (verb != "status") {
        std::cout << reply.text << (reply.text.ends_with('\n') ? "" : "\n");
        return 0;
      }
      auto status = status_map(reply);
      if (!watch) {
        for (const auto& [name, value] : status) std::cout << name << ": " << value << "\n";
        return 0;
      }
      std::cout << "\r" << progress_line(status) << "\033[K" << std::flush;
      if (status["state"] == "idle" || status["state"] == "planned") {
        std::cout << "\n";
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  } catch (const std::exception& e) {
    std::cerr << "santral reshard: cannot reach the router at " << options.router << ": "
              << e.what() << "\n";
    return 1;
  }
}

}  // namespace santral::router
