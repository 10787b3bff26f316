#include "router/merge/collecting_merge.h"
#include "router/merge/merge_kinds.h"

namespace santral::router {
namespace {

class Unmergeable final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    protocol::RespWriter(out).error(no_merge_rule_error(plan().command));
  }
};

}  // namespace

std::unique_ptr<ReplyMerge> make_unmergeable(MergePlan plan) {
  return std::make_unique<Unmergeable>(std::move(plan));
}

std::unique_ptr<ReplyMerge> make_merge(MergePlan plan) {
  using protocol::Merge;
  switch (plan.kind) {
    case Merge::Ordered:
      return make_ordered_merge(std::move(plan));
    case Merge::Sum:
      return make_sum_merge(std::move(plan));
    case Merge::AllOk:
      return make_all_ok_merge(std::move(plan));
    case Merge::Concat:
      return make_concat_merge(std::move(plan));
    case Merge::Same:
      return make_same_merge(std::move(plan));
    case Merge::Scan:
      return make_scan_merge(std::move(plan));
    case Merge::Random:
      return make_random_merge(std::move(plan));
    case Merge::Info:
      return make_info_merge(std::move(plan));
    case Merge::SumPerName:
      return make_sum_per_name_merge(std::move(plan));
    case Merge::AnyOk:
      return make_any_ok_merge(std::move(plan));
    case Merge::None:
      break;
  }
  return make_unmergeable(std::move(plan));
}

}  // namespace santral::router
