#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace santral::router {

// Numbers read and written exactly as Redis 7.0 does, so that a result computed at the router
// is byte for byte what one Redis would have answered.

// Redis's string2ll(): an integer with no sign but '-', no leading zero, no spaces, in range.
// It is also the test for a set member that an intset can hold.
std::optional<std::int64_t> redis_integer(std::string_view text);

// Redis's getDoubleFromObject(): strtod over the whole text (so "inf", "-inf", "1e3" and hex
// are numbers), no leading space, not NaN, no overflow.
std::optional<double> redis_double(std::string_view text);

// Redis 7.0's addReplyDouble(): "%.17g", inf and -inf; as a bulk string (RESP2) or a RESP3
// double.
void append_redis_double(std::string& out, double value, int protocol);

}  // namespace santral::router
