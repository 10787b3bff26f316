#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "router/analysis/sampled_request.h"

namespace santral::router {

// SANTRAL ANALYZE ... RAW: a fleet peer's sampled requests as a RESP reply and back, one row
// each: [key, pattern, command, write, shards, of, at_us].
std::string raw_samples_reply(const std::vector<SampledRequest>& samples);
bool read_raw_samples(std::string_view frame, std::vector<SampledRequest>& out, std::string& error);

}  // namespace santral::router
