#include "placement/namespace/hash_ring.h"

#include <md5.h>

#include <algorithm>
#include <string>

namespace santral::placement {

HashRing::HashRing(std::span<const Member> members, std::uint32_t vnodes) {
  for (const auto& member : members) {
    std::uint64_t count = std::uint64_t{member.node.weight} * vnodes;
    for (std::uint64_t n = 0; n < count; n += 4) {
      std::string name = std::string(member.node.name) + "-" + std::to_string(n / 4);
      std::uint8_t digest[MD5_DIGEST_LENGTH];
      MD5_CTX ctx;
      MD5Init(&ctx);
      MD5Update(&ctx, reinterpret_cast<const std::uint8_t*>(name.data()), name.size());
      MD5Final(digest, &ctx);
      for (std::uint64_t part = 0; part < 4 && n + part < count; ++part) {
        const std::uint8_t* b = digest + part * 4;
        std::uint32_t value = b[0] | b[1] << 8 | b[2] << 16 | std::uint32_t{b[3]} << 24;
        points_.push_back({value, static_cast<std::uint32_t>(member.shard)});
      }
    }
  }
  // Ties (rare) are settled by shard index, so the ring does not depend on the listing order.
  std::sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) {
    return a.value != b.value ? a.value < b.value : a.shard < b.shard;
  });
}

std::size_t HashRing::locate(std::uint32_t hash) const {
  auto it = std::lower_bound(points_.begin(), points_.end(), hash,
                             [](const Point& p, std::uint32_t h) { return p.value < h; });
  if (it == points_.end()) it = points_.begin();
  return it->shard;
}

}  // namespace santral::placement
