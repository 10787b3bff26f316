#pragma once

#include <memory>

#include "router/merge/merge_brief.h"

namespace santral::router {

// One merge per protocol::Merge kind; make_merge() picks by brief.kind.
// simple_merges.cpp
std::unique_ptr<ReplyMerge> make_sum_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_all_ok_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_concat_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_same_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_any_ok_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_random_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_sum_per_name_merge(MergeBrief brief);
// ordered_merge.cpp, scan_merge.cpp, info_merge.cpp
std::unique_ptr<ReplyMerge> make_ordered_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_scan_merge(MergeBrief brief);
std::unique_ptr<ReplyMerge> make_info_merge(MergeBrief brief);
// make_merge.cpp: answers with an error (a Merge::None brief is a routing bug).
std::unique_ptr<ReplyMerge> make_unmergeable(MergeBrief brief);

}  // namespace santral::router
