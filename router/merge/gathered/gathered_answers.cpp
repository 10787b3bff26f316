// The answers of the gathered reads, each following its Redis 7.0 command: its options,
// its checks in Redis's order, and its reply in Redis's shape for RESP2 and RESP3.
#include "router/merge/gathered/gathered_answers.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/merge/gathered/hyperloglog_count.h"
#include "router/merge/gathered/lcs.h"
#include "router/merge/gathered/redis_numbers.h"
#include "router/merge/gathered/set_algebra.h"
#include "router/merge/gathered/sorted_set_algebra.h"

namespace santral::router {
namespace {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::RespWriter;
using Kind = GatheredKey::Kind;

void error(std::string& out, ClientError code) {
  RespWriter(out).error(protocol::error_message(code));
}

bool any_wrong_type(const GatheredInput& input) {
  return std::any_of(input.keys.begin(), input.keys.end(),
                     [](const GatheredKey& key) { return key.kind == Kind::WrongType; });
}

// getPositiveLongFromObjectOrReply(..., "LIMIT can't be negative").
std::optional<std::size_t> parse_limit(std::string_view text) {
  auto value = redis_integer(text);
  if (!value || *value < 0) return std::nullopt;
  return static_cast<std::size_t>(*value);
}

// ~n for a RESP3 client (Redis's addReplySetLen), *n otherwise.
void set_header(std::string& out, int protocol, std::size_t count) {
  out.push_back(protocol == 3 ? '~' : '*');
  out.append(std::to_string(count));
  out.append("\r\n");
}

// --- SINTER, SUNION, SDIFF, SINTERCARD (src/t_set.c) ---------------------------------------

void answer_sets(GatherAlgorithm algorithm, const GatheredInput& input, std::string& out) {
  std::size_t limit = 0;
  if (algorithm == GatherAlgorithm::SetInterCard) {
    // sinterCardCommand parses LIMIT before it looks at a key.
    auto args = input.args;
    for (std::size_t j = 2 + input.keys.size(); j < args.size(); ++j) {
      bool more = j + 1 < args.size();
      if (!equals_nocase(args[j], "LIMIT") || !more) return error(out, ClientError::SyntaxError);
      auto parsed = parse_limit(args[++j]);
      if (!parsed) return error(out, ClientError::LimitNegative);
      limit = *parsed;
    }
  }
  if (any_wrong_type(input)) return error(out, ClientError::WrongType);
  std::vector<SetMembers> sets;
  sets.reserve(input.keys.size());
  for (const auto& key : input.keys) sets.push_back(key.members);
  std::vector<std::string_view> result;
  switch (algorithm) {
    case GatherAlgorithm::SetInterCard:
      return RespWriter(out).integer(static_cast<std::int64_t>(set_inter_card(sets, limit)));
    case GatherAlgorithm::SetInter:
      result = set_inter(sets);
      break;
    case GatherAlgorithm::SetUnion:
      result = set_union(sets);
      break;
    default:
      result = set_diff(sets);
      break;
  }
  set_header(out, input.protocol, result.size());
  RespWriter writer(out, input.protocol);
  for (std::string_view member : result) writer.bulk(member);
}

// --- ZUNION, ZINTER, ZDIFF, ZINTERCARD (src/t_zset.c) --------------------------------------

struct ZsetOptions {
  Aggregate aggregate = Aggregate::Sum;
  bool withscores = false;
  std::size_t limit = 0;
};

// zunionInterDiffGenericCommand's option loop; false after writing the error. `first_option`:
// where the options begin; `store`: ZUNIONSTORE and friends, which take no WITHSCORES.
bool parse_zset_options(GatherAlgorithm algorithm, std::span<const std::string_view> args,
                        std::size_t first_option, bool store, std::vector<ZsetSource>& sources,
                        ZsetOptions& options, std::string& out) {
  bool diff = algorithm == GatherAlgorithm::ZDiff;
  bool card = algorithm == GatherAlgorithm::ZInterCard;
  std::size_t setnum = sources.size();
  std::size_t j = first_option;
  std::size_t remaining = args.size() - j;
  while (remaining > 0) {
    std::string_view option = args[j];
    if (!diff && !card && remaining >= setnum + 1 && equals_nocase(option, "WEIGHTS")) {
      j++;
      remaining--;
      for (std::size_t i = 0; i < setnum; i++, j++, remaining--) {
        auto weight = redis_double(args[j]);
        if (!weight) {
          error(out, ClientError::WeightNotFloat);
          return false;
        }
        sources[i].weight = *weight;
      }
    } else if (!diff && !card && remaining >= 2 && equals_nocase(option, "AGGREGATE")) {
      std::string_view how = args[j + 1];
      if (equals_nocase(how, "SUM")) {
        options.aggregate = Aggregate::Sum;
      } else if (equals_nocase(how, "MIN")) {
        options.aggregate = Aggregate::Min;
      } else if (equals_nocase(how, "MAX")) {
        options.aggregate = Aggregate::Max;
      } else {
        error(out, ClientError::SyntaxError);
        return false;
      }
      j += 2;
      remaining -= 2;
    } else if (!card && !store && equals_nocase(option, "WITHSCORES")) {
      j++;
      remaining--;
      options.withscores = true;
    } else if (card && remaining >= 2 && equals_nocase(option, "LIMIT")) {
      auto parsed = parse_limit(args[j + 1]);
      if (!parsed) {
        error(out, ClientError::LimitNegative);
        return false;
      }
      options.limit = *parsed;
      j += 2;
      remaining -= 2;
    } else {
      error(out, ClientError::SyntaxError);
      return false;
    }
  }
  return true;
}

void write_zset(const std::vector<ScoredMember>& result, bool withscores, int protocol,
                std::string& out) {
  RespWriter writer(out, protocol);
  writer.array_header(withscores && protocol == 2 ? result.size() * 2 : result.size());
  for (const auto& m : result) {
    if (withscores && protocol == 3) writer.array_header(2);
    writer.bulk(m.member);
    if (withscores) append_redis_double(out, m.score, protocol);
  }
}

std::vector<ZsetSource> zset_sources(std::span<const GatheredKey> keys) {
  std::vector<ZsetSource> sources(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const GatheredKey& key = keys[i];
    auto& members = sources[i].members;
    members.reserve(key.members.size());
    for (std::size_t m = 0; m < key.members.size(); ++m)
      members.push_back({key.members[m], key.kind == Kind::Zset ? key.scores[m] : 1.0});
  }
  return sources;
}

void answer_zsets(GatherAlgorithm algorithm, const GatheredInput& input, std::string& out) {
  // Redis looks the keys up before it reads the options.
  if (any_wrong_type(input)) return error(out, ClientError::WrongType);
  std::vector<ZsetSource> sources = zset_sources(input.keys);
  ZsetOptions options;
  if (!parse_zset_options(algorithm, input.args, 2 + sources.size(), false, sources, options, out))
    return;
  switch (algorithm) {
    case GatherAlgorithm::ZInterCard:
      return RespWriter(out).integer(
          static_cast<std::int64_t>(zset_inter_card(std::move(sources), options.limit)));
    case GatherAlgorithm::ZUnion:
      return write_zset(zset_union(std::move(sources), options.aggregate), options.withscores,
                        input.protocol, out);
    case GatherAlgorithm::ZInter:
      return write_zset(zset_inter(std::move(sources), options.aggregate), options.withscores,
                        input.protocol, out);
    default:
      return write_zset(zset_diff(sources), options.withscores, input.protocol, out);
  }
}

// --- PFCOUNT (src/hyperloglog.c) -------------------------------------------------------------

void answer_pfcount(const GatheredInput& input, std::string& out) {
  HllRegisters max{};
  for (const auto& key : input.keys) {
    if (key.kind == Kind::Missing) continue;
    if (key.kind != Kind::String) return error(out, ClientError::WrongType);
    if (!is_hyperloglog(key.text)) return error(out, ClientError::HllInvalid);
    if (!hll_merge(max, key.text)) return error(out, ClientError::HllCorrupted);
  }
  RespWriter(out).integer(static_cast<std::int64_t>(hll_count(max)));
}

// --- LCS (src/t_string.c) ----------------------------------------------------------------------

void answer_lcs(const GatheredInput& input, std::string& out) {
  for (const auto& key : input.keys)
    if (key.kind == Kind::WrongType) return error(out, ClientError::LcsNotStrings);
  bool getlen = false, getidx = false, withmatchlen = false;
  long long minmatchlen = 0;
  auto args = input.args;
  for (std::size_t j = 3; j < args.size(); ++j) {
    std::string_view opt = args[j];
    bool more = j + 1 < args.size();
    if (equals_nocase(opt, "IDX")) {
      getidx = true;
    } else if (equals_nocase(opt, "LEN")) {
      getlen = true;
    } else if (equals_nocase(opt, "WITHMATCHLEN")) {
      withmatchlen = true;
    } else if (equals_nocase(opt, "MINMATCHLEN") && more) {
      auto value = redis_integer(args[j + 1]);
      if (!value) return error(out, ClientError::NotAnInteger);
      minmatchlen = std::max<long long>(*value, 0);
      j++;
    } else {
      return error(out, ClientError::SyntaxError);
    }
  }
  if (getidx && getlen) return error(out, ClientError::LcsLenAndIdx);
  std::string_view a = input.keys[0].text;
  std::string_view b = input.keys[1].text;
  if (!lcs_table_fits(a, b)) return error(out, ClientError::LcsTooLarge);
  LcsResult result = lcs(a, b, getidx || !getlen, minmatchlen);
  RespWriter writer(out, input.protocol);
  if (getidx) {
    writer.map_header(2);
    writer.bulk("matches");
    writer.array_header(result.matches.size());
    for (const auto& m : result.matches) {
      writer.array_header(withmatchlen ? 3 : 2);
      writer.array_header(2);
      writer.integer(m.a_start);
      writer.integer(m.a_end);
      writer.array_header(2);
      writer.integer(m.b_start);
      writer.integer(m.b_end);
      if (withmatchlen) writer.integer(m.length);
    }
    writer.bulk("len");
    writer.integer(result.length);
  } else if (getlen) {
    writer.integer(result.length);
  } else {
    writer.bulk(result.sequence);
  }
}

}  // namespace

StoredResult compute_for_store(GatherAlgorithm algorithm, std::span<const std::string_view> args,
                               std::span<const GatheredKey> sources) {
  StoredResult result;
  bool wrong = std::any_of(sources.begin(), sources.end(),
                           [](const GatheredKey& key) { return key.kind == Kind::WrongType; });
  if (wrong) {
    error(result.error, ClientError::WrongType);
    return result;
  }
  auto as_members = [&](const std::vector<std::string_view>& members) {
    result.members.reserve(members.size());
    for (std::string_view m : members) result.members.push_back({m, 0});
  };
  std::vector<SetMembers> sets;
  switch (algorithm) {
    case GatherAlgorithm::SetInter:
    case GatherAlgorithm::SetUnion:
    case GatherAlgorithm::SetDiff:
      sets.reserve(sources.size());
      for (const auto& key : sources) sets.push_back(key.members);
      if (algorithm == GatherAlgorithm::SetInter) as_members(set_inter(sets));
      if (algorithm == GatherAlgorithm::SetUnion) as_members(set_union(sets));
      if (algorithm == GatherAlgorithm::SetDiff) as_members(set_diff(sets));
      return result;
    case GatherAlgorithm::ZUnion:
    case GatherAlgorithm::ZInter:
    case GatherAlgorithm::ZDiff: {
      std::vector<ZsetSource> zsets = zset_sources(sources);
      ZsetOptions options;
      // ZUNIONSTORE dst numkeys key ...: the options follow the keys.
      if (!parse_zset_options(algorithm, args, 3 + zsets.size(), true, zsets, options,
                              result.error))
        return result;
      result.scored = true;
      if (algorithm == GatherAlgorithm::ZUnion)
        result.members = zset_union(std::move(zsets), options.aggregate);
      else if (algorithm == GatherAlgorithm::ZInter)
        result.members = zset_inter(std::move(zsets), options.aggregate);
      else
        result.members = zset_diff(zsets);
      return result;
    }
    default:
      error(result.error, ClientError::SyntaxError);
      return result;
  }
}

void answer_gathered(GatherAlgorithm algorithm, const GatheredInput& input, std::string& out) {
  switch (algorithm) {
    case GatherAlgorithm::SetInter:
    case GatherAlgorithm::SetInterCard:
    case GatherAlgorithm::SetUnion:
    case GatherAlgorithm::SetDiff:
      return answer_sets(algorithm, input, out);
    case GatherAlgorithm::ZUnion:
    case GatherAlgorithm::ZInter:
    case GatherAlgorithm::ZInterCard:
    case GatherAlgorithm::ZDiff:
      return answer_zsets(algorithm, input, out);
    case GatherAlgorithm::PfCount:
      return answer_pfcount(input, out);
    case GatherAlgorithm::Lcs:
      return answer_lcs(input, out);
    case GatherAlgorithm::None:  // not a gathered read: the planner never gathers it
      return;
  }
}

}  // namespace santral::router
