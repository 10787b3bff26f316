#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "router/merge/gathered/gather_rules.h"
#include "router/merge/gathered/sorted_set_algebra.h"

namespace santral::router {

// What one key held, as its shard's replies to the fetch commands showed it.
struct GatheredKey {
  enum class Kind { Missing, Set, Zset, String, WrongType };
  Kind kind = Kind::Missing;
  std::vector<std::string_view> members;  // Set, Zset (in the order the shard sent them)
  std::vector<double> scores;             // Zset, one per member
  std::string_view text;                  // String
};

// The request as the client sent it and what its keys held, in argument order.
struct GatheredInput {
  std::span<const std::string_view> args;
  std::span<const GatheredKey> keys;
  int protocol = 2;
};

// Appends the client's reply: what Redis 7.0 answers to the request given those keys, the same
// errors in the same order of precedence (an option Redis parses before it looks at the keys is
// refused before a key of the wrong type, and the other way round).
void answer_gathered(GatherAlgorithm algorithm, const GatheredInput& input, std::string& out);

// What a STORE form writes to its destination: SINTERSTORE dst k ... stores SINTER k ...;
// ZUNIONSTORE dst numkeys k ... [WEIGHTS] [AGGREGATE] stores ZUNION's result. `args` is the
// whole STORE request, `sources` its source keys. `error` is set (a whole RESP error) where
// Redis refuses the command.
struct StoredResult {
  std::string error;
  std::vector<ScoredMember> members;  // scores only for the Z forms
  bool scored = false;
};
StoredResult compute_for_store(GatherAlgorithm algorithm, std::span<const std::string_view> args,
                               std::span<const GatheredKey> sources);

}  // namespace santral::router
