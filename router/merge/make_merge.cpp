#include "router/merge/collecting_merge.h"
#include "router/merge/merge_kinds.h"

namespace santral::router {
namespace {

class Unmergeable final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    protocol::RespWriter(out).error(no_merge_rule_error(brief().command));
  }
};

}  // namespace

std::unique_ptr<ReplyMerge> make_unmergeable(MergeBrief brief) {
  return std::make_unique<Unmergeable>(std::move(brief));
}

std::unique_ptr<ReplyMerge> make_merge(MergeBrief brief) {
  using protocol::Merge;
  switch (brief.kind) {
    case Merge::Ordered:
      return make_ordered_merge(std::move(brief));
    case Merge::Sum:
      return make_sum_merge(std::move(brief));
    case Merge::AllOk:
      return make_all_ok_merge(std::move(brief));
    case Merge::Concat:
      return make_concat_merge(std::move(brief));
    case Merge::Same:
      return make_same_merge(std::move(brief));
    case Merge::Scan:
      return make_scan_merge(std::move(brief));
    case Merge::Random:
      return make_random_merge(std::move(brief));
    case Merge::Info:
      return make_info_merge(std::move(brief));
    case Merge::SumPerName:
      return make_sum_per_name_merge(std::move(brief));
    case Merge::AnyOk:
      return make_any_ok_merge(std::move(brief));
    case Merge::None:
      break;
  }
  return make_unmergeable(std::move(brief));
}

}  // namespace santral::router
