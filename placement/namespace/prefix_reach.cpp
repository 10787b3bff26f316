#include "placement/namespace/prefix_reach.h"

#include <algorithm>

namespace santral::placement {

std::string_view glob_literal_prefix(std::string_view glob) {
  return glob.substr(0, std::min(glob.find_first_of("*?[\\"), glob.size()));
}

PrefixReach reach(const config::KeyPattern& pattern, int field, std::string_view prefix) {
  PrefixReach out;
  const auto& segs = pattern.segments();
  auto lead = pattern.leading_literal();
  std::size_t common = std::min(lead.size(), prefix.size());
  if (lead.substr(0, common) != prefix.substr(0, common)) {
    out.disjoint = true;
    return out;
  }
  if (field < 0) out.shard_key_prefix = prefix;
  if (pattern.field_count() == 0) {
    // One literal: the only key is the literal itself.
    if (!lead.starts_with(prefix)) out.disjoint = true;
    if (field < 0 && !out.disjoint) out.shard_key = lead;
    return out;
  }
  // A trailing literal is matched at the key's end, which the prefix does not show.
  if (!segs.back().field) return out;

  std::size_t pos = 0;
  int field_number = -1;
  for (std::size_t s = 0; s < segs.size(); ++s) {
    const auto& seg = segs[s];
    if (!seg.field) {
      if (pos + seg.text.size() > prefix.size()) return out;  // the prefix ends inside it
      pos += seg.text.size();
      continue;
    }
    ++field_number;
    bool ours = field_number == field;
    if (s + 1 == segs.size()) {  // the final field takes the rest of the key
      if (ours) out.shard_key_prefix = prefix.substr(pos);
      out.covers = true;
      out.prefix_unmatched = pos == prefix.size();
      return out;
    }
    const std::string& next = segs[s + 1].text;
    auto at = pos < prefix.size() ? prefix.find(next, pos + 1) : std::string_view::npos;
    if (at == std::string_view::npos) {
      // The literal may begin at the earliest inside the prefix's last next.size() - 1 bytes.
      if (ours && pos < prefix.size()) {
        std::size_t end =
            std::min(prefix.size(), std::max(pos + 1, prefix.size() + 1 - next.size()));
        out.shard_key_prefix = prefix.substr(pos, end - pos);
      } else if (ours) {
        out.shard_key_prefix = std::string_view();
      }
      return out;
    }
    if (ours) out.shard_key = prefix.substr(pos, at - pos);
    pos = at;
  }
  return out;
}

}  // namespace santral::placement
