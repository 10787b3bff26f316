#pragma once

#include <memory>

#include "router/merge/merge_plan.h"

namespace santral::router {

// One merge per protocol::Merge kind; make_merge() picks by plan.kind.
// simple_merges.cpp
std::unique_ptr<ReplyMerge> make_sum_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_all_ok_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_concat_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_same_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_any_ok_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_random_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_sum_per_name_merge(MergePlan plan);
// ordered_merge.cpp, scan_merge.cpp, info_merge.cpp
std::unique_ptr<ReplyMerge> make_ordered_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_scan_merge(MergePlan plan);
std::unique_ptr<ReplyMerge> make_info_merge(MergePlan plan);
// make_merge.cpp: answers with an error (a Merge::None plan is a routing bug).
std::unique_ptr<ReplyMerge> make_unmergeable(MergePlan plan);

}  // namespace santral::router
