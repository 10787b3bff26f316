// SCAN goes to one shard at a time; its reply's cursor is rewritten to also name the shard
// (router/merge/scan_cursor.h), so the client's next call continues there, then on the next shard.

#include "protocol/arguments.h"
#include "protocol/reply_encoder.h"
#include "router/merge/collecting_merge.h"
#include "router/merge/merge_kinds.h"
#include "router/merge/scan_cursor.h"

namespace santral::router {
namespace {

using protocol::ReplyValue;
using Type = ReplyValue::Type;

std::optional<std::uint64_t> shard_cursor(const ReplyValue& value) {
  if (value.type != Type::BulkString && value.type != Type::SimpleString) return std::nullopt;
  return protocol::parse_integer<std::uint64_t>(value.text);
}

// [cursor, [key, ...]]
bool is_scan_page(const ReplyValue& value) {
  return value.type == Type::Array && value.elements.size() == 2 &&
         shard_cursor(value.elements[0]) &&
         (value.elements[1].type == Type::Array || value.elements[1].type == Type::Set);
}

class ScanMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    // One fragment: the shard this call went to.
    if (fails(0, is_scan_page)) return write_failure(0, out);
    const ReplyValue& page = value(0);
    const std::uint64_t answered = *shard_cursor(page.elements[0]);
    const std::optional<std::uint64_t> cursor =
        next_scan_cursor({brief().scan_shard, 0}, answered, brief().scan_shards);
    if (!cursor) {
      protocol::RespWriter(out).error(scan_cursor_too_large_error(shard(0), answered));
      return;
    }
    out.reserve(out.size() + replies()[0].frame.size() + 16);
    protocol::RespWriter writer(out);
    writer.array_header(2);
    writer.bulk(std::to_string(*cursor));
    protocol::encode_reply(page.elements[1], out);
  }
};

}  // namespace

std::unique_ptr<ReplyMerge> make_scan_merge(MergeBrief brief) {
  return std::make_unique<ScanMerge>(std::move(brief));
}

}  // namespace santral::router
