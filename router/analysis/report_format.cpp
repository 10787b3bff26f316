#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "router/analysis/shard_key_analysis.h"

namespace santral::router {

namespace {

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? std::string("-")
                    : fmt::format("{:.1f}%",
                                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace

std::string report_text(const AnalysisReport& r) {
  std::string out;
  auto line = std::back_inserter(out);
  fmt::format_to(line, "analysis of {}{} over {:.1f} s, sampling {:.2f}% of requests\n", r.target,
                 r.namespace_name.empty() ? " (keys matching the glob)" : " (namespace)", r.seconds,
                 r.rate * 100);
  fmt::format_to(line, "routers: {}\n", fmt::join(r.routers, ", "));
  fmt::format_to(line,
                 "sampled: {} requests of the target (of {} sampled), {} keys drawn from the "
                 "shards; {} shards\n",
                 r.sampled, r.sampled_all, r.stored, r.shards);
  out += "\n# key characteristics\n";
  for (const auto& k : r.keys) {
    fmt::format_to(line, "{}: distinct ~{:.0f}{}{}", k.name, k.distinct,
                   k.low_cardinality ? " (LOW CARDINALITY)" : "", k.numeric ? ", numeric" : "");
    if (k.monotonicity)
      fmt::format_to(line, ", monotonicity r={:.2f} over {} new keys{}", *k.monotonicity,
                     k.new_keys, k.monotonic ? " (MONOTONIC)" : "");
    else
      fmt::format_to(line, ", monotonicity unknown ({} new keys)", k.new_keys);
    out += "\n  most frequent:";
    for (const auto& [value, share] : k.top)
      fmt::format_to(line, " {} {:.1f}%", value, share * 100);
    out += "\n";
  }
  out += "\n# read/write distribution (shards a request reached)\n";
  for (const auto& d : r.distribution) {
    auto total = d.one + d.several + d.all + d.none;
    fmt::format_to(line,
                   "{}: {} requests, one shard {}, several {}, all {}, none (answered by "
                   "Santral) {}\n",
                   d.kind, total, percent(d.one, total), percent(d.several, total),
                   percent(d.all, total), percent(d.none, total));
  }
  for (const auto& c : r.scatter)
    fmt::format_to(line, "  scatter-gather: {} ({})\n", c.what, c.requests);
  fmt::format_to(line, "\n# what-if per strategy ({} shards; SCAN MATCH {})\n", r.shards,
                 r.scan_pattern.empty() ? "-" : r.scan_pattern);
  fmt::format_to(line, "{:<22} {:<28} {:>8} {:>5} {:>8} {:>9} {:>11} {:>6}  {}\n", "strategy",
                 "shard key", "hot-spot", "scan", "touches", "moved+1", "hot-spot+1", "floor",
                 "note");
  for (std::size_t i = 0; i < r.whatifs.size(); ++i) {
    const auto& w = r.whatifs[i];
    std::string note =
        w.excluded.empty() ? (r.recommended == i ? "recommended" : "") : "excluded: " + w.excluded;
    if (w.hot_spot == 0 && !w.excluded.empty())
      fmt::format_to(line, "{:<22} {:<28} {:>8} {:>5} {:>8} {:>9} {:>11} {:>6}  {}\n", w.strategy,
                     w.key, "-", "-", "-", "-", "-", "-", note);
    else
      fmt::format_to(line, "{:<22} {:<28} {:>8.2f} {:>5} {:>8} {:>8.1f}% {:>11.2f} {:>6.2f}  {}\n",
                     w.strategy, w.key, w.hot_spot, w.scan_shards, w.store_touches, w.moved * 100,
                     w.hot_spot_grown, w.floor, note);
  }
  if (!r.warnings.empty()) {
    out += "\n# warnings\n";
    for (const auto& w : r.warnings) fmt::format_to(line, "- {}\n", w);
  }
  fmt::format_to(line, "\n# recommendation\n{}\n", r.recommendation);
  if (!r.config_lines.empty()) fmt::format_to(line, "\n# config lines\n{}", r.config_lines);
  return out;
}

std::string report_json(const AnalysisReport& r) {
  using nlohmann::json;
  json keys = json::array();
  for (const auto& k : r.keys) {
    json top = json::array();
    for (const auto& [value, share] : k.top) top.push_back({{"value", value}, {"share", share}});
    keys.push_back({{"name", k.name},
                    {"accesses", k.accesses},
                    {"distinct", k.distinct},
                    {"numeric", k.numeric},
                    {"top", top},
                    {"monotonicity", k.monotonicity ? json(*k.monotonicity) : json(nullptr)},
                    {"new_keys", k.new_keys},
                    {"monotonic", k.monotonic},
                    {"low_cardinality", k.low_cardinality}});
  }
  json distribution = json::array();
  for (const auto& d : r.distribution)
    distribution.push_back({{"kind", d.kind},
                            {"one", d.one},
                            {"several", d.several},
                            {"all", d.all},
                            {"none", d.none}});
  json scatter = json::array();
  for (const auto& c : r.scatter) scatter.push_back({{"what", c.what}, {"requests", c.requests}});
  json whatifs = json::array();
  for (std::size_t i = 0; i < r.whatifs.size(); ++i) {
    const auto& w = r.whatifs[i];
    whatifs.push_back({{"strategy", w.strategy},
                       {"key", w.key},
                       {"current", w.current},
                       {"hot_spot", w.hot_spot},
                       {"scan_shards", w.scan_shards},
                       {"store_touches", w.store_touches},
                       {"moved", w.moved},
                       {"hot_spot_grown", w.hot_spot_grown},
                       {"floor", w.floor},
                       {"excluded", w.excluded},
                       {"recommended", r.recommended == i}});
  }
  json out = {{"target", r.target},
              {"namespace", r.namespace_name},
              {"seconds", r.seconds},
              {"rate", r.rate},
              {"routers", r.routers},
              {"missing", r.missing},
              {"sampled", r.sampled},
              {"sampled_all", r.sampled_all},
              {"stored", r.stored},
              {"shards", r.shards},
              {"keys", keys},
              {"distribution", distribution},
              {"scatter", scatter},
              {"scan_pattern", r.scan_pattern},
              {"whatif", whatifs},
              {"warnings", r.warnings},
              {"recommendation", r.recommendation},
              {"config_lines", r.config_lines}};
  return out.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace santral::router
