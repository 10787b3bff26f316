#include "config/hashkit/ketama.h"

#include <md5.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>

namespace santral::hashkit {
namespace {

constexpr std::uint32_t kPointsPerServer = 160;  // for an average-weight server
constexpr std::uint32_t kPointsPerDigest = 4;
// twemproxy formats "<name>-<n>" into a 273-byte buffer and hashes at most 272 bytes of it.
constexpr std::size_t kMaxPointKey = 272;

// twemproxy sorts its servers by name (shorter first, then bytewise) when it loads the config,
// and numbers them in that order; points are laid down in it, which settles equal values.
std::vector<std::uint32_t> twemproxy_order(std::span<const RingNode> nodes) {
  std::vector<std::uint32_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto& x = nodes[a].name;
    const auto& y = nodes[b].name;
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  return order;
}

// Points for one server, in twemproxy's single-precision arithmetic (the float rounding decides
// the count at some weights): floor(weight / total * 160 / 4 * servers + 1e-10) * 4.
std::uint32_t points_for(std::uint32_t weight, std::uint32_t total_weight, std::size_t servers) {
  float share = static_cast<float>(weight) / static_cast<float>(total_weight);
  float per_digest =
      share * static_cast<float>(kPointsPerServer) / 4.0f * static_cast<float>(servers);
  auto nudged = static_cast<float>(static_cast<double>(per_digest) + 0.0000000001);
  return static_cast<std::uint32_t>(std::floor(nudged) * 4.0f);
}

std::array<std::uint8_t, MD5_DIGEST_LENGTH> md5_digest(std::string_view text) {
  MD5_CTX ctx;
  MD5Init(&ctx);
  MD5Update(&ctx, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  std::array<std::uint8_t, MD5_DIGEST_LENGTH> digest;
  MD5Final(digest.data(), &ctx);
  return digest;
}

}  // namespace

KetamaRing::KetamaRing(std::span<const RingNode> nodes) {
  std::uint32_t total_weight = 0;
  for (const auto& node : nodes) total_weight += node.weight;

  for (std::uint32_t index : twemproxy_order(nodes)) {
    const RingNode& node = nodes[index];
    std::uint32_t digests = points_for(node.weight, total_weight, nodes.size()) / kPointsPerDigest;
    for (std::uint32_t n = 0; n < digests; ++n) {
      std::string key = std::string(node.name) + "-" + std::to_string(n);
      if (key.size() > kMaxPointKey) key.resize(kMaxPointKey);
      auto digest = md5_digest(key);
      for (std::size_t part = 0; part < kPointsPerDigest; ++part) {
        const std::uint8_t* b = digest.data() + part * 4;
        std::uint32_t value = b[0] | b[1] << 8 | b[2] << 16 | std::uint32_t{b[3]} << 24;
        points_.push_back({value, index});
      }
    }
  }
  // twemproxy uses qsort; glibc's is a stable merge sort at these sizes.
  std::stable_sort(points_.begin(), points_.end(),
                   [](const Point& a, const Point& b) { return a.value < b.value; });
}

std::size_t KetamaRing::locate(std::uint32_t hash) const {
  if (points_.empty()) return 0;
  auto it = std::lower_bound(points_.begin(), points_.end(), hash,
                             [](const Point& p, std::uint32_t h) { return p.value < h; });
  if (it == points_.end()) it = points_.begin();  // past the last point: wrap to the first
  return it->node;
}

}  // namespace santral::hashkit
