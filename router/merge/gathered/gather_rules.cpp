#include "router/merge/gathered/gather_rules.h"

namespace santral::router {
namespace {

using A = GatherAlgorithm;

constexpr std::string_view kWholeZset[] = {"0", "-1", "WITHSCORES"};
constexpr FetchCommand kMembers[] = {{"SMEMBERS", {}}};
// A ZUNION input may be a sorted set or a plain set: one of the two answers WRONGTYPE.
constexpr FetchCommand kZsetOrSet[] = {{"ZRANGE", kWholeZset}, {"SMEMBERS", {}}};
constexpr FetchCommand kString[] = {{"GET", {}}};

// Indexed by the gather= column: kRules[algorithm - 1] is the rule of `algorithm`.
constexpr GatherRule kRules[] = {
    {A::SetInter, kMembers, "the intersection, in the smallest set's order"},
    {A::SetInterCard, kMembers, "the size of the intersection (up to LIMIT)"},
    {A::SetUnion, kMembers, "the union"},
    {A::SetDiff, kMembers, "the first set minus the others"},
    {A::ZUnion, kZsetOrSet, "the union, with WEIGHTS and AGGREGATE, sorted by score"},
    {A::ZInter, kZsetOrSet, "the intersection, with WEIGHTS and AGGREGATE, sorted by score"},
    {A::ZInterCard, kZsetOrSet, "the size of the intersection (up to LIMIT)"},
    {A::ZDiff, kZsetOrSet, "the first sorted set minus the others, sorted by score"},
    {A::PfCount, kString, "the HyperLogLogs' registers merged as PFMERGE does, then counted"},
    {A::Lcs, kString, "the longest common subsequence (LEN, IDX, MINMATCHLEN, WITHMATCHLEN)"},
};

using W = protocol::CrossShardWrite;
using K = StagedWriteKind;

// Indexed by the cross-write= column: kWriteRules[form - 1] is the rule of `form`.
constexpr WriteRule kWriteRules[] = {
    {W::StoreSetInter, K::Store, A::SetInter},
    {W::StoreSetUnion, K::Store, A::SetUnion},
    {W::StoreSetDiff, K::Store, A::SetDiff},
    {W::StoreZUnion, K::Store, A::ZUnion},
    {W::StoreZInter, K::Store, A::ZInter},
    {W::StoreZDiff, K::Store, A::ZDiff},
    {W::SetMove, K::SetMove},
    {W::ListMove, K::ListMove},
    {W::Rename, K::Rename},
    {W::RenameNx, K::Rename, A::None, true},
    {W::Copy, K::Copy},
};

// Each table holds one rule per value of its column, in the enum's order.
template <typename Rule, std::size_t N, typename Column>
constexpr bool indexed_by(const Rule (&rules)[N], Column last, auto column_of) {
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(column_of(rules[i])) != i + 1) return false;
  return static_cast<std::size_t>(last) == N;
}
static_assert(indexed_by(kRules, A::Lcs, [](const GatherRule& r) { return r.algorithm; }));
static_assert(indexed_by(kWriteRules, W::Copy, [](const WriteRule& r) { return r.form; }));

template <typename Rule, std::size_t N, typename Column>
const Rule* rule_of(const Rule (&rules)[N], Column column) {
  return column == Column::None ? nullptr : &rules[static_cast<std::size_t>(column) - 1];
}

}  // namespace

const WriteRule* cross_shard_write_rule(const protocol::CommandSpec& spec) {
  return rule_of(kWriteRules, spec.cross_write);
}

const GatherRule& stored_read(const WriteRule& rule) {
  return *rule_of(kRules, rule.reads_as);
}

const GatherRule* gather_rule(const protocol::CommandSpec& spec) {
  return rule_of(kRules, spec.gather);
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
