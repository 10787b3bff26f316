#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "config/config_error.h"
#include "tools/strategy_report/config_report.h"
#include "tools/strategy_report/lesson_model.h"
#include "tools/strategy_report/lesson_report.h"

int main(int argc, char** argv) {
  using namespace santral::strategy_report;
  CLI::App app{
      "santral-strategy-report: replays a key/access trace through a Santral config, without "
      "backends, and prints per namespace the hot-spot ratio (busiest shard's accesses / mean), "
      "store touches per access and the share of keys that move when a shard is added.\n"
      "Trace file: one key per line, optionally followed by a count of accesses (default 1; 0: "
      "stored, not accessed); '#' starts a comment line."};
  LessonOptions lesson;
  ConfigReportOptions mine;
  bool lesson_mode = false;
  auto* lesson_opt = app.add_flag("--lesson", lesson_mode,
                                  "Replay the seed lesson's generated trace (4,000 sellers, Zipf "
                                  "0.9, 5-day active window) and print its table beside ours");
  app.add_option("--shards", lesson.shard_counts, "Shard counts for --lesson")
      ->needs(lesson_opt)
      ->check(CLI::Range(1, 63));
  app.add_option("--seed", lesson.seed, "Random seed of the --lesson trace")->needs(lesson_opt);
  std::string section = "all";
  app.add_option("--section", section,
                 "What --lesson prints: strategies (the trace replayed per strategy), "
                 "rebalancing (Santral's balancer on the lesson's grown seller), or all")
      ->check(CLI::IsMember({"all", "strategies", "rebalancing"}))
      ->needs(lesson_opt);
  std::string write_trace;
  std::size_t trace_every = 1;
  auto* write_trace_opt =
      app.add_option("--write-trace", write_trace,
                     "Write the --lesson trace (\"key count\" a line) to this file instead of "
                     "printing the report, to replay it elsewhere (scripts/analyze-lesson)")
          ->needs(lesson_opt);
  app.add_option("--trace-every", trace_every,
                 "With --write-trace: keep one shipment in this many (1: all 12,000,000)")
      ->check(CLI::Range(1, 1000000))
      ->needs(write_trace_opt);
  auto* config_opt =
      app.add_option("-c,--config", mine.config, "A Santral config (YAML) to measure")
          ->check(CLI::ExistingFile)
          ->excludes(lesson_opt);
  auto* trace_opt = app.add_option("-t,--trace", mine.trace, "The trace to replay through it")
                        ->check(CLI::ExistingFile)
                        ->needs(config_opt);
  config_opt->needs(trace_opt);
  app.add_option("--scan", mine.scans,
                 "A SCAN MATCH glob: the shards Santral sends it to and the keys they hold")
      ->needs(config_opt);
  bool markdown = false;
  app.add_flag("--markdown", markdown, "Print the tables as Markdown");
  CLI11_PARSE(app, argc, argv);
  if (!lesson_mode && mine.config.empty()) {
    std::cerr << app.help();
    return 2;
  }
  lesson.markdown = mine.markdown = markdown;
  lesson.section = section == "strategies"    ? LessonSection::Strategies
                   : section == "rebalancing" ? LessonSection::Rebalancing
                                              : LessonSection::All;
  try {
    if (!write_trace.empty()) {
      std::ofstream file(write_trace);
      if (!file) throw std::runtime_error("cannot write " + write_trace);
      write_lesson_trace(make_lesson_trace(lesson.seed), lesson.seed, trace_every, file);
      file.close();
      if (!file) throw std::runtime_error("cannot write " + write_trace);
    } else if (lesson_mode)
      print_lesson_report(lesson, std::cout);
    else
      print_config_report(mine, std::cout);
  } catch (const santral::config::ConfigError& e) {
    std::cerr << "santral-strategy-report: invalid config: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "santral-strategy-report: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
