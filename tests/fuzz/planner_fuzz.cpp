// Routing decisions without a network: every parsed request is looked up in the command table,
// checked for arity, its keys found by key specs and placed on shards; SCAN cursors and INFO
// sections are decoded. Nothing may crash or point outside the request.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "protocol/command_table.h"
#include "protocol/key_extraction.h"
#include "protocol/request_parser.h"
#include "router/merge/scan_cursor.h"
#include "router/routes/info_sections.h"
#include "tests/fuzz/fuzz_check.h"

using namespace santral;

namespace {

const placement::ShardMap& shard_map() {
  static const placement::ShardMap map = [] {
    config::Config c;
    c.hash = hashkit::hash_function_named("murmur").value();
    c.hash_tag = "{}";
    for (int i = 0; i < 5; ++i) {
      config::ShardConfig s;
      s.name = s.ring_name = "shard" + std::to_string(i);
      s.address = {"127.0.0.1", static_cast<std::uint16_t>(7000 + i)};
      s.weight = 1 + i % 2;
      c.shards.push_back(s);
    }
    return placement::ShardMap(c);
  }();
  return map;
}

void plan(const protocol::Request& request) {
  const protocol::CommandSpec* spec = protocol::find_command(request.name());
  if (spec == nullptr) return;
  if (!spec->subcommands.empty() && request.args.size() >= 2) {
    spec = protocol::find_subcommand(*spec, request.args[1]);
    if (spec == nullptr) return;
  }
  if (!spec->arity_ok(request.args.size())) return;
  std::vector<std::uint32_t> positions;
  if (protocol::find_keys(*spec, request.args, positions)) {
    for (auto p : positions) {
      FUZZ_CHECK(p > 0 && p < request.args.size());
      FUZZ_CHECK(shard_map().shard_for_key(request.args[p]) < shard_map().shard_count());
    }
  }
  if (spec->merge == protocol::Merge::Scan) {
    auto position = router::decode_scan_cursor(request.args[1], 5);
    if (position) {
      FUZZ_CHECK(position->shard < 5);
      auto next = router::next_scan_cursor(*position, position->shard_cursor, 5);
      if (next && position->shard_cursor != 0) {
        auto back = router::decode_scan_cursor(std::to_string(*next), 5);
        FUZZ_CHECK(back && back->shard == position->shard &&
                   back->shard_cursor == position->shard_cursor);
      }
    }
  }
  if (spec->merge == protocol::Merge::Info) router::parse_info_request(request.args);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  protocol::RequestParser parser;
  std::string_view rest = input;
  while (!rest.empty()) {
    protocol::Request request;
    std::size_t consumed = 0;
    auto status = parser.parse(rest, request, consumed);
    if (status == protocol::ParseStatus::NeedMore || status == protocol::ParseStatus::Error) break;
    if (status == protocol::ParseStatus::Complete) plan(request);
    rest.remove_prefix(consumed);
  }
  return 0;
}
