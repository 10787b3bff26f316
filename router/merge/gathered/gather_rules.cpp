#include "router/merge/gathered/gather_rules.h"

#include <array>
#include <utility>

namespace santral::router {
namespace {

using A = GatherAlgorithm;

constexpr std::string_view kWholeZset[] = {"0", "-1", "WITHSCORES"};
constexpr FetchCommand kMembers[] = {{"SMEMBERS", {}}};
// A ZUNION input may be a sorted set or a plain set: one of the two answers WRONGTYPE.
constexpr FetchCommand kZsetOrSet[] = {{"ZRANGE", kWholeZset}, {"SMEMBERS", {}}};
constexpr FetchCommand kString[] = {{"GET", {}}};

constexpr GatherRule kRules[] = {
    {"sinter", A::SetInter, kMembers, "the intersection, in the smallest set's order"},
    {"sintercard", A::SetInterCard, kMembers, "the size of the intersection (up to LIMIT)"},
    {"sunion", A::SetUnion, kMembers, "the union"},
    {"sdiff", A::SetDiff, kMembers, "the first set minus the others"},
    {"zunion", A::ZUnion, kZsetOrSet, "the union, with WEIGHTS and AGGREGATE, sorted by score"},
    {"zinter", A::ZInter, kZsetOrSet,
     "the intersection, with WEIGHTS and AGGREGATE, sorted by score"},
    {"zintercard", A::ZInterCard, kZsetOrSet, "the size of the intersection (up to LIMIT)"},
    {"zdiff", A::ZDiff, kZsetOrSet, "the first sorted set minus the others, sorted by score"},
    {"pfcount", A::PfCount, kString,
     "the HyperLogLogs' registers merged as PFMERGE does, then counted"},
    {"lcs", A::Lcs, kString,
     "the longest common subsequence (LEN, IDX, MINMATCHLEN, WITHMATCHLEN)"},
};

}  // namespace

const GatherRule* gather_rule(const protocol::CommandSpec& spec) {
  static const auto specs = [] {
    std::array<const protocol::CommandSpec*, std::size(kRules)> found{};
    for (std::size_t i = 0; i < found.size(); ++i)
      found[i] = protocol::find_command(kRules[i].command);
    return found;
  }();
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i] == &spec) return &kRules[i];
  return nullptr;
}

std::string fetch_text(const FetchCommand& fetch, std::string_view key) {
  std::string text(fetch.name);
  text.push_back(' ');
  text.append(key);
  for (std::string_view arg : fetch.after_key) {
    text.push_back(' ');
    text.append(arg);
  }
  return text;
}

}  // namespace santral::router
