// MGET split across shards: each shard answers for its own keys, and the values go back in
// the order the client listed the keys.
//
//   MGET a b c d          positions: a->(0,0) b->(1,0) c->(0,1) d->(1,1)
//     shard0: MGET a c  -> [va, vc]
//     shard1: MGET b d  -> [vb, vd]
//   client  <- [va, vb, vc, vd]
#include <algorithm>

#include "protocol/reply_encoder.h"
#include "router/merge/collecting_merge.h"
#include "router/merge/merge_kinds.h"

namespace santral::router {
namespace {

using protocol::ReplyValue;

bool is_array(const ReplyValue& value) {
  return value.type == ReplyValue::Type::Array;
}

class OrderedMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    if (auto failed = first_failure(is_array)) return write_failure(*failed, out);
    if (auto problem = missing_value()) {
      protocol::RespWriter(out).error(*problem);
      return;
    }
    std::size_t bytes = 0;
    for (const FragmentReply& reply : replies()) bytes += reply.frame.size();
    out.reserve(out.size() + bytes + 16);
    protocol::RespWriter(out).array_header(brief().positions.size());
    for (const auto& [fragment, element] : brief().positions)
      protocol::encode_reply(value(fragment).elements[element], out);
  }

  // Why some position points at no value, if it does: the lowest-numbered fragment whose
  // array is shorter than its keys (or, a planner bug, a position naming no fragment).
  std::optional<std::string> missing_value() const {
    std::vector<std::size_t> needed(replies().size(), 0);
    for (const auto& [fragment, element] : brief().positions) {
      if (fragment >= needed.size()) return inconsistent_plan_error(brief().command);
      needed[fragment] = std::max<std::size_t>(needed[fragment], std::size_t{element} + 1);
    }
    for (std::uint32_t i = 0; i < replies().size(); ++i)
      if (value(i).elements.size() < needed[i])
        return unexpected_reply_error(shard(i), brief().command);
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<ReplyMerge> make_ordered_merge(MergeBrief brief) {
  return std::make_unique<OrderedMerge>(std::move(brief));
}

}  // namespace santral::router
