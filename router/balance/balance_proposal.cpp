#include "router/balance/balance_proposal.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "config/namespace/table_yaml.h"

namespace santral::router {

namespace {

// A table entry while the proposal is applied: a range or slot range (or group) and its name.
template <typename Entry>
struct Named {
  std::string name;
  Entry entry;
};

template <typename Entry, typename NameOf, typename Cut>
std::vector<Entry> apply(const std::vector<Entry>& table, NameOf name_of, Cut cut,
                         const balance::Proposal& proposal, const LiveUnits& units) {
  std::vector<Named<Entry>> pieces;
  pieces.reserve(table.size());
  for (const auto& entry : table) pieces.push_back({name_of(entry), entry});
  auto find = [&](const std::string& name) {
    return std::find_if(pieces.begin(), pieces.end(),
                        [&](const auto& p) { return p.name == name; });
  };
  for (const auto& split : proposal.splits) {
    auto at = find(split.unit);
    auto ref = units.refs.find(split.unit);
    if (at == pieces.end() || ref == units.refs.end() || ref->second.children.size() != 2) continue;
    auto [low, high] = cut(at->entry, ref->second.split_at);
    Named<Entry> first{ref->second.children[0], low}, second{ref->second.children[1], high};
    at = pieces.erase(at);
    at = pieces.insert(at, second);
    pieces.insert(at, first);
  }
  for (const auto& move : proposal.moves) {
    auto at = find(move.unit);
    if (at != pieces.end()) at->entry.shard = move.to;
  }
  std::vector<Entry> out;
  out.reserve(pieces.size());
  for (auto& piece : pieces) out.push_back(std::move(piece.entry));
  return out;
}

bool touches(const balance::Proposal& proposal, const LiveUnits& units, std::size_t ns) {
  auto mine = [&](const std::string& name) {
    auto ref = units.refs.find(name);
    return ref != units.refs.end() && ref->second.ns == ns;
  };
  return std::any_of(proposal.moves.begin(), proposal.moves.end(),
                     [&](const auto& m) { return mine(m.unit); });
}

std::string load_text(double load, BalanceMetric metric) {
  switch (metric) {
    case BalanceMetric::Ops:
      return fmt::format("{:.1f} ops/s", load);
    case BalanceMetric::Keys:
      return fmt::format("{:.0f} keys", load);
    case BalanceMetric::Bytes:
      return fmt::format("{:.0f} bytes", load);
  }
  return {};
}

std::string loads_line(const config::Config& config, const std::vector<double>& loads,
                       BalanceMetric metric) {
  std::string out;
  for (std::size_t s = 0; s < loads.size() && s < config.shards.size(); ++s)
    out += fmt::format("{}{} {}", s == 0 ? "" : ", ", config.shards[s].name,
                       load_text(loads[s], metric));
  return out;
}

}  // namespace

std::vector<ProposedNamespace> proposed_namespaces(const config::Config& config,
                                                   const balance::Proposal& proposal,
                                                   const LiveUnits& units) {
  std::vector<ProposedNamespace> out;
  for (std::size_t ns = 0; ns < config.namespaces.size(); ++ns) {
    if (!touches(proposal, units, ns)) continue;
    ProposedNamespace proposed{ns, config.namespaces[ns]};
    auto& table = proposed.table;
    const std::string& name = table.name;
    switch (table.strategy) {
      case config::Strategy::Range:
        table.ranges = apply(
            table.ranges,
            [&](const config::KeyRange& r) { return range_unit_name(name, r.from, r.to); },
            [](const config::KeyRange& r, const std::string& at) {
              config::KeyRange low = r, high = r;
              low.to = at;
              high.from = at;
              return std::pair{low, high};
            },
            proposal, units);
        break;
      case config::Strategy::Slots:
        table.slots = apply(
            table.slots,
            [&](const config::SlotRange& r) { return slot_unit_name(name, r.from, r.to); },
            [](const config::SlotRange& r, const std::string& at) {
              config::SlotRange low = r, high = r;
              auto cut = static_cast<std::uint32_t>(std::stoul(at));
              low.to = cut - 1;
              high.from = cut;
              return std::pair{low, high};
            },
            proposal, units);
        break;
      case config::Strategy::Directory:
        for (const auto& move : proposal.moves)
          for (auto& [group, shard] : table.groups)
            if (group_unit_name(name, group) == move.unit) shard = move.to;
        break;
      default:
        continue;
    }
    out.push_back(std::move(proposed));
  }
  return out;
}

std::string proposed_config_text(std::string_view text, const config::Config& config,
                                 const std::vector<ProposedNamespace>& proposed) {
  std::vector<config::NamespaceConfig> tables;
  tables.reserve(proposed.size());
  for (const auto& change : proposed) tables.push_back(change.table);
  return config::with_tables(text, config, tables, config::TableScope::Table);
}

std::string describe_balance(const config::Config& config, const balance::Proposal& proposal,
                             const LiveUnits& units, const BalanceMeasure& measure,
                             double target_ratio) {
  const auto metric = measure.metric;
  std::string out;
  out += fmt::format(
      "balance by {}{} ({:.1f} requests/s measured over {:.1f} s; keys and bytes from {} "
      "RANDOMKEY draws per shard)\n",
      metric_name(metric), measure.metric_fell_back ? " (no requests measured, so by keys)" : "",
      measure.ops_total, measure.window_s, measure.samples);
  for (const auto& shard : measure.unanswered)
    out += fmt::format("not measured: {} (its keys are left out)\n", shard);
  out += fmt::format("before: {} (busiest {:.2f}x the mean)\n",
                     loads_line(config, proposal.loads_before, metric), proposal.ratio_before);
  if (!proposal.error.empty()) return out + "no plan: " + proposal.error + "\n";
  out += fmt::format("target: busiest within {:.2f}x the mean; ", target_ratio);
  if (proposal.moves.empty()) {
    out += proposal.target_met
               ? "met already, nothing to move\n"
               : fmt::format("not met, and no move helps (floor {:.2f}x)\n", proposal.ratio_floor);
  } else {
    out += fmt::format("this plan reaches {:.2f}x{} (floor {:.2f}x)\n", proposal.ratio_after,
                       proposal.target_met ? "" : ", short of it", proposal.ratio_floor);
    out += fmt::format("after: {}\n", loads_line(config, proposal.loads_after, metric));
  }
  for (const auto& split : proposal.splits)
    out += fmt::format("split {} ({}, {}): {}\n", split.unit, load_text(split.load, metric),
                       config.shards.at(split.shard).name, split.reason);
  if (!proposal.moves.empty())
    out += fmt::format("{} moves, ~{} keys ({:.2f}% of {}), ~{} bytes:\n", proposal.moves.size(),
                       proposal.keys_moved, 100 * proposal.moved_fraction(), proposal.keys_total,
                       proposal.bytes_moved);
  for (const auto& move : proposal.moves)
    out += fmt::format("  move {} from {} to {}: {}~{} keys, ~{} bytes\n", move.unit,
                       config.shards.at(move.from).name, config.shards.at(move.to).name,
                       metric == BalanceMetric::Keys ? "" : load_text(move.load, metric) + ", ",
                       move.keys, move.bytes);
  for (const auto& jumbo : proposal.jumbos) {
    std::string load = fmt::format("{}, ~{} keys, {:.2f}x the mean", load_text(jumbo.load, metric),
                                   jumbo.keys, jumbo.ratio);
    if (units.refs.contains(jumbo.unit))
      out +=
          fmt::format("jumbo: {} on {} ({}) cannot be split (one key or group); it stays whole\n",
                      jumbo.unit, config.shards.at(jumbo.shard).name, load);
    else  // pinned units are named with their shard
      out += fmt::format(
          "placed by a hash: {} ({}) moves only with its ring (shard weights, another shard)\n",
          jumbo.unit, load);
  }
  if (!proposal.moves.empty())
    out +=
        "to carry it out: santral balance --write FILE, put FILE in place of the config, "
        "reload, then SANTRAL RESHARD PLAN and APPROVE\n";
  return out;
}

}  // namespace santral::router
