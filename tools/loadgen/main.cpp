#include <cctype>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "tools/loadgen/open_loop_run.h"
#include "tools/loadgen/report.h"

int main(int argc, char** argv) {
  using namespace santral::loadgen;
  CLI::App app{
      "santral-loadgen: an open-loop load generator for Redis and proxies in front of it. Request "
      "i leaves at start + i / rate, round-robin over the connections, whether or not earlier "
      "replies came back; its latency runs from that intended time to its reply, so a server (or "
      "this generator) falling behind shows in the percentiles. Prints one line for a person and "
      "one 'loadgen: key=value ...' line; exits 1 if a connection fails, a reply is an error, or "
      "replies are missing 5 s after the schedule ends."};
  RunOptions options;
  app.add_option("--host", options.host, "Server address")->capture_default_str();
  app.add_option("--port", options.port, "Server port")->required();
  app.add_option("--rate", options.rate, "Requests a second, over all connections")
      ->required()
      ->check(CLI::Range(1.0, 1e7));
  app.add_option("--duration", options.duration, "Seconds measured")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  app.add_option("--warmup", options.warmup, "Seconds sent first and not measured")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--connections", options.connections, "Connections")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  const std::map<std::string, Command> commands{
      {"get", Command::Get}, {"set", Command::Set}, {"incr", Command::Incr}};
  std::string command = "get";
  app.add_option("--command", command, "get, set (a 3-byte value) or incr, of key:<12 digits>")
      ->capture_default_str()
      ->check(CLI::IsMember(commands, CLI::ignore_case));
  app.add_option("--keys", options.keys, "Keys, chosen uniformly at random")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000'000}));
  app.add_option("--seed", options.seed, "Seed of the key choice")->capture_default_str();
  app.add_option("--user", options.user, "Log each connection in as this user first (AUTH)");
  app.add_option("--password", options.password, "The --user's password");
  app.add_flag("--until-eof", options.until_eof,
               "Send until standard input ends (instead of for --duration); each line read "
               "before then names a phase that starts when it is read (see --log)");
  app.add_option("--log", options.log,
                 "Write the phases and every answered request to this file at the end: 'phase "
                 "<name> <ns>' lines, then '<intended ns> <key number> <latency µs> <error 0/1>' "
                 "lines, ns from the schedule's start");
  CLI11_PARSE(app, argc, argv);
  for (auto& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  options.command = commands.at(command);

  const RunResult result = run_open_loop(options);
  if (result.started)
    std::cout << human_line(options, result) << "\n" << machine_line(options, result) << "\n";
  const auto why = failures(options, result);
  for (const auto& line : why) std::cerr << "santral-loadgen: " << line << "\n";
  return why.empty() ? 0 : 1;
}
