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

using W = CrossShardWrite;

constexpr WriteRule kWriteRules[] = {
    {"sinterstore", W::Store, "sinter"}, {"sunionstore", W::Store, "sunion"},
    {"sdiffstore", W::Store, "sdiff"},   {"zunionstore", W::Store, "zunion"},
    {"zinterstore", W::Store, "zinter"}, {"zdiffstore", W::Store, "zdiff"},
    {"smove", W::SetMove, ""},           {"lmove", W::ListMove, ""},
    {"rpoplpush", W::ListMove, ""},      {"rename", W::Rename, ""},
    {"renamenx", W::Rename, "", true},   {"copy", W::Copy, ""},
};

template <typename Rule, std::size_t N>
const Rule* find_rule(const Rule (&rules)[N], const protocol::CommandSpec& spec) {
  static const auto specs = [&] {
    std::array<const protocol::CommandSpec*, N> found{};
    for (std::size_t i = 0; i < N; ++i) found[i] = protocol::find_command(rules[i].command);
    return found;
  }();
  for (std::size_t i = 0; i < N; ++i)
    if (specs[i] == &spec) return &rules[i];
  return nullptr;
}

}  // namespace

const WriteRule* cross_shard_write_rule(const protocol::CommandSpec& spec) {
  return find_rule(kWriteRules, spec);
}

const GatherRule& stored_read(const WriteRule& rule) {
  return *gather_rule(*protocol::find_command(rule.reads_as));
}

const GatherRule* gather_rule(const protocol::CommandSpec& spec) {
  return find_rule(kRules, spec);
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
