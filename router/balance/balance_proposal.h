#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/balance/proposal.h"
#include "config/config.h"
#include "router/balance/live_units.h"

namespace santral::router {

// SANTRAL BALANCE PLAN's text puts the proposed config after this line (santral balance
// --write saves what follows it).
inline constexpr std::string_view kProposedConfigMarker = "--- proposed config ---\n";

// A namespace as the proposal would leave it: its ranges, slots or groups with the splits cut and
// the moves made.
struct ProposedNamespace {
  std::size_t ns = 0;  // index into Config::namespaces
  config::NamespaceConfig table;
};

std::vector<ProposedNamespace> proposed_namespaces(const config::Config& config,
                                                   const balance::Proposal& proposal,
                                                   const LiveUnits& units);

// The config file's text with each proposed namespace's table in place of its old one. It is
// written out again by yaml-cpp: the data is the same, comments and layout are not kept.
// Empty when the text holds no such namespace (a twemproxy-style file).
std::string proposed_config_text(std::string_view text, const config::Config& config,
                                 const std::vector<ProposedNamespace>& proposed);

// How a balance proposal was measured, for its report.
struct BalanceMeasure {
  BalanceMetric metric = BalanceMetric::Ops;
  double window_s = 0;
  unsigned samples = 0;
  double ops_total = 0;
  std::vector<std::string> unanswered;  // "s2: <why>"
  bool metric_fell_back = false;        // asked for ops, but none were measured: keys
};

// SANTRAL BALANCE PLAN's text: the shards' loads before and after, the splits and moves,
// jumbos, what hashes place, and how to carry the proposal out.
std::string describe_balance(const config::Config& config, const balance::Proposal& proposal,
                             const LiveUnits& units, const BalanceMeasure& measure,
                             double target_ratio);

}  // namespace santral::router
