// Shard replies on arbitrary bytes: the scanner finds frame ends the same way at once and in
// pieces; every frame it accepts decodes and re-encodes to a frame with the same value; and
// every merge takes any frames without crashing; its RESP2 form (protocol/resp2_reply.h) is one
// whole frame with only RESP2 types.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/reply_encoder.h"
#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp2_reply.h"
#include "router/merge/merge_brief.h"
#include "tests/fuzz/fuzz_check.h"

using namespace santral;
using protocol::ScanStatus;

namespace {

std::vector<std::string> frames(std::string_view input, std::size_t piece, bool& error) {
  protocol::ReplyScanner scanner;
  std::vector<std::string> out;
  std::string buffer;
  std::size_t fed = 0;
  error = false;
  while (true) {
    std::size_t take = piece == 0 ? input.size() - fed : std::min(piece, input.size() - fed);
    buffer.append(input.substr(fed, take));
    fed += take;
    while (!buffer.empty()) {
      std::size_t size = 0;
      auto status = scanner.scan(buffer, size);
      if (status == ScanStatus::NeedMore) break;
      if (status == ScanStatus::Error) {
        error = true;
        return out;
      }
      FUZZ_CHECK(size > 0 && size <= buffer.size());
      out.emplace_back(buffer.substr(0, size));
      buffer.erase(0, size);
    }
    if (fed == input.size()) return out;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::size_t piece = 1 + data[0] % 7;
  auto merge_kind = static_cast<protocol::Merge>(1 + data[1] % 11);
  std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  bool error_whole = false;
  bool error_pieces = false;
  auto whole = frames(input, 0, error_whole);
  auto pieces = frames(input, piece, error_pieces);
  FUZZ_CHECK(whole == pieces && error_whole == error_pieces);

  for (const auto& frame : whole) {
    protocol::ReplyValue value;
    if (!protocol::parse_reply(frame, value)) continue;
    std::string encoded;
    protocol::encode_reply(value, encoded);
    // What Santral writes is one whole frame, and reads back as the same value. (Not always
    // the same bytes: a shard could send "*01", which is re-encoded "*1".)
    protocol::ReplyScanner scanner;
    std::size_t encoded_size = 0;
    FUZZ_CHECK(scanner.scan(encoded, encoded_size) == ScanStatus::Complete &&
               encoded_size == encoded.size());
    protocol::ReplyValue again;
    FUZZ_CHECK(protocol::parse_reply(encoded, again));
    std::string twice;
    protocol::encode_reply(again, twice);
    FUZZ_CHECK(twice == encoded);

    for (const auto& shape : {protocol::Resp2Shape{}, protocol::Resp2Shape{'*', '*', true, true}}) {
      std::string resp2;
      FUZZ_CHECK(protocol::to_resp2(frame, shape, resp2));
      std::size_t resp2_size = 0;
      protocol::ReplyScanner resp2_scanner;
      FUZZ_CHECK(resp2_scanner.scan(resp2, resp2_size) == ScanStatus::Complete &&
                 resp2_size == resp2.size());
      protocol::ReplyValue downgraded;
      FUZZ_CHECK(protocol::parse_reply(resp2, downgraded));
      std::vector<const protocol::ReplyValue*> pending{&downgraded};
      while (!pending.empty()) {
        const auto* node = pending.back();
        pending.pop_back();
        using Type = protocol::ReplyValue::Type;
        FUZZ_CHECK(node->type == Type::SimpleString || node->type == Type::Error ||
                   node->type == Type::Integer || node->type == Type::BulkString ||
                   node->type == Type::Array ||
                   (node->type == Type::Null && node->resp2_null != 0));
        for (const auto& element : node->elements) pending.push_back(&element);
      }
    }
  }

  if (whole.empty() || whole.size() > 8) return 0;
  router::MergeBrief brief;
  brief.kind = merge_kind;
  brief.command = "FUZZ";
  for (std::size_t i = 0; i < whole.size(); ++i)
    brief.fragment_names.push_back("shard" + std::to_string(i));
  for (std::uint32_t i = 0; i < 4; ++i) brief.positions.emplace_back(i % whole.size(), i);
  brief.scan_shards = 4;
  brief.info.shards_section = true;
  auto merge = router::make_merge(std::move(brief));
  for (std::size_t i = whole.size(); i-- > 0;) merge->add(static_cast<std::uint32_t>(i), whole[i]);
  std::string out;
  merge->finish(out);
  FUZZ_CHECK(!out.empty());
  return 0;
}
