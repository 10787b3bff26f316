#pragma once

#include <cstddef>
#include <string_view>

namespace santral::loadgen {

enum class ScanStatus { Complete, NeedMore, Malformed };

struct ScannedReply {
  ScanStatus status = ScanStatus::NeedMore;
  std::size_t size = 0;  // bytes of the reply, when Complete
  bool error = false;    // a -ERR ... reply
};

// Finds where the first RESP reply in `bytes` ends, without building it: +simple, -error,
// :integer, $bulk (and $-1), *array (and *-1) of those. Never reads past `bytes`; a reply cut
// short is NeedMore.
ScannedReply scan_reply(std::string_view bytes);

}  // namespace santral::loadgen
