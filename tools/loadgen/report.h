#pragma once

#include <string>
#include <vector>

#include "tools/loadgen/open_loop_run.h"

namespace santral::loadgen {

// One line for a person: what was offered, what came back, the percentiles, and whether the
// generator kept to its schedule.
std::string human_line(const RunOptions& options, const RunResult& result);
// One line for scripts: loadgen: rate=... sent=... received=... errors=... p50_us=... p90_us=...
// p99_us=... p999_us=... max_us=... achieved=... behind_ms=... late=... missing=...
std::string machine_line(const RunOptions& options, const RunResult& result);
// Why the run failed, one line each (a connection, error replies, missing replies); empty when
// it did not.
std::vector<std::string> failures(const RunOptions& options, const RunResult& result);

}  // namespace santral::loadgen
