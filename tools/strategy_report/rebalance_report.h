#pragma once

#include <iosfwd>

namespace santral::strategy_report {

// The seed lesson's rebalancing experiment: its published figures, its own rebalancer
// recomputed, and Santral's balancer (config/balance) on the same directory, side by side; then
// the floor the largest seller puts under the ratio for three Zipf exponents.
void print_rebalance_report(bool markdown, std::ostream& out);

}  // namespace santral::strategy_report
