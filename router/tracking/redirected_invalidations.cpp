#include "router/tracking/redirected_invalidations.h"

#include <fmt/format.h>

namespace santral::router {

namespace {
constexpr std::string_view kPushHead = ">2\r\n$10\r\ninvalidate\r\n";
constexpr std::string_view kMessageHead = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
constexpr std::string_view kResp3Null = "_\r\n";
}  // namespace

std::string redirected_keys(std::string_view push_frame, int tracking_protocol) {
  std::string_view keys = push_frame;
  if (keys.starts_with(kPushHead)) keys.remove_prefix(kPushHead.size());
  if (keys == kResp3Null && tracking_protocol == 2) return "$-1\r\n";
  return std::string(keys);
}

std::string redirected_invalidation(std::string_view keys, int target_protocol,
                                    bool target_subscribed) {
  if (target_protocol == 3) return fmt::format("{}{}", kPushHead, keys);
  if (target_subscribed) return fmt::format("{}{}", kMessageHead, keys);
  return {};
}

std::string redirect_broken_push(std::uint64_t target) {
  return fmt::format(">2\r\n$21\r\ntracking-redir-broken\r\n:{}\r\n", target);
}

}  // namespace santral::router
