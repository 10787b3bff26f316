#include "router/merge/gathered/sorted_set_algebra.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace santral::router {
namespace {

using Scores = std::unordered_map<std::string_view, double>;

// zunionInterAggregate(): inf + -inf is NaN, which Redis makes 0.
void aggregate_into(double& target, double value, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::Sum:
      target = target + value;
      if (std::isnan(target)) target = 0.0;
      break;
    case Aggregate::Min:
      target = value < target ? value : target;
      break;
    case Aggregate::Max:
      target = value > target ? value : target;
      break;
  }
}

// Redis sorts the inputs of a union or an intersection by size (a stable sort, as glibc's
// qsort is); with SUM the order in which scores are added is that order.
void sort_by_cardinality(std::vector<ZsetSource>& sources) {
  std::stable_sort(sources.begin(), sources.end(), [](const ZsetSource& a, const ZsetSource& b) {
    return a.members.size() < b.members.size();
  });
}

Scores scores_of(const ZsetSource& source) {
  Scores scores;
  scores.reserve(source.members.size());
  for (const auto& m : source.members) scores.emplace(m.member, m.score);
  return scores;
}

void sort_zset(std::vector<ScoredMember>& members) {
  std::sort(members.begin(), members.end(), [](const ScoredMember& a, const ScoredMember& b) {
    if (a.score != b.score) return a.score < b.score;
    return a.member < b.member;
  });
}

double weighted(const ZsetSource& source, double score) {
  double value = source.weight * score;
  return std::isnan(value) ? 0 : value;
}

// Walks the smallest source; found(member, score) for each member in every source.
template <typename Found>
void walk_intersection(std::vector<ZsetSource>& sources, Aggregate aggregate, Found found) {
  sort_by_cardinality(sources);
  if (sources.empty() || sources[0].members.empty()) return;
  std::vector<Scores> others;
  others.reserve(sources.size() - 1);
  for (std::size_t j = 1; j < sources.size(); ++j) others.push_back(scores_of(sources[j]));
  for (const auto& m : sources[0].members) {
    double score = weighted(sources[0], m.score);
    std::size_t j = 1;
    for (; j < sources.size(); ++j) {
      auto it = others[j - 1].find(m.member);
      if (it == others[j - 1].end()) break;
      aggregate_into(score, it->second * sources[j].weight, aggregate);
    }
    if (j == sources.size() && !found(m.member, score)) return;
  }
}

}  // namespace

std::vector<ScoredMember> zset_union(std::vector<ZsetSource> sources, Aggregate aggregate) {
  sort_by_cardinality(sources);
  std::vector<ScoredMember> result;
  std::unordered_map<std::string_view, std::size_t> index;
  for (const auto& source : sources) {
    for (const auto& m : source.members) {
      double score = weighted(source, m.score);
      auto [it, added] = index.emplace(m.member, result.size());
      if (added)
        result.push_back({m.member, score});
      else
        aggregate_into(result[it->second].score, score, aggregate);
    }
  }
  sort_zset(result);
  return result;
}

std::vector<ScoredMember> zset_inter(std::vector<ZsetSource> sources, Aggregate aggregate) {
  std::vector<ScoredMember> result;
  walk_intersection(sources, aggregate, [&](std::string_view member, double score) {
    result.push_back({member, score});
    return true;
  });
  sort_zset(result);
  return result;
}

std::size_t zset_inter_card(std::vector<ZsetSource> sources, std::size_t limit) {
  std::size_t count = 0;
  walk_intersection(sources, Aggregate::Sum,
                    [&](std::string_view, double) { return ++count != limit; });
  return count;
}

std::vector<ScoredMember> zset_diff(const std::vector<ZsetSource>& sources) {
  std::vector<ScoredMember> result;
  if (sources.empty() || sources[0].members.empty()) return result;
  std::vector<std::unordered_set<std::string_view>> others;
  others.reserve(sources.size() - 1);
  for (std::size_t j = 1; j < sources.size(); ++j) {
    auto& members = others.emplace_back();
    members.reserve(sources[j].members.size());
    for (const auto& m : sources[j].members) members.insert(m.member);
  }
  for (const auto& m : sources[0].members) {
    bool elsewhere = std::any_of(others.begin(), others.end(),
                                 [&](const auto& other) { return other.contains(m.member); });
    if (!elsewhere) result.push_back(m);
  }
  sort_zset(result);
  return result;
}

}  // namespace santral::router
