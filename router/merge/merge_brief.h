#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "protocol/command_table.h"
#include "router/merge/reply_merge.h"

namespace santral::router {

// Everything a merge needs to know about the request it answers. Fragment i is the
// sub-request sent to the shard named fragment_names[i]; its reply arrives through
// ReplyMerge::add(i, reply) in any order.
struct MergeBrief {
  protocol::Merge kind = protocol::Merge::None;
  std::string command;                      // upper-case name for messages, e.g. "MSET"
  std::vector<std::string> fragment_names;  // one per fragment: the shard it went to
  int protocol = 2;                         // the client's RESP version (2 or 3)

  // Ordered (MGET): entry i says where the value of the caller's i-th key is: which fragment,
  // and which element of that fragment's array reply.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> positions;

  // Info: what Santral adds to the shards' merged INFO text.
  struct Info {
    std::string local_sections;  // complete "# Section\r\nkey:value\r\n..." text, appended
    // key -> value replacing the merged value wherever the key appears (connected_clients...)
    std::vector<std::pair<std::string, std::string>> overrides;
    bool shards_section = false;  // add "# Shards" with one line per fragment
  } info;

  // Scan: the shard this SCAN call went to, of how many; the reply's cursor is rewritten so
  // that it names that shard (see router/merge/scan_cursor.h).
  std::uint32_t scan_shard = 0;
  std::uint32_t scan_shards = 1;
};

// The merge for `brief.kind` (anything but Merge::None).
std::unique_ptr<ReplyMerge> make_merge(MergeBrief brief);

}  // namespace santral::router
