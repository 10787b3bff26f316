#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "protocol/arguments.h"

namespace santral::protocol {

// What Redis 7.0 writes in place of a secret argument in MONITOR and SLOWLOG.
inline constexpr std::string_view kRedacted = "(redacted)";

// Calls `hide(i)` for each argument of a request that Redis 7.0 redacts: AUTH's, the user and
// password after HELLO's AUTH and MIGRATE's AUTH2, and the password after MIGRATE's AUTH.
// Allocates nothing; a request of another command costs one comparison of its name each.
template <typename Hide>
void for_each_redacted(std::span<const std::string_view> args, Hide&& hide) {
  if (args.empty()) return;
  if (equals_nocase(args[0], "AUTH")) {
    for (std::size_t i = 1; i < args.size(); ++i) hide(i);
  } else if (equals_nocase(args[0], "HELLO")) {
    for (std::size_t i = 2; i + 2 < args.size(); ++i)
      if (equals_nocase(args[i], "AUTH")) {
        hide(i + 1);
        hide(i + 2);
        i += 2;
      }
  } else if (equals_nocase(args[0], "MIGRATE")) {
    for (std::size_t i = 6; i < args.size(); ++i) {
      if (equals_nocase(args[i], "KEYS")) break;
      if (equals_nocase(args[i], "AUTH") && i + 1 < args.size()) {
        hide(++i);
      } else if (equals_nocase(args[i], "AUTH2") && i + 2 < args.size()) {
        hide(i + 1);
        hide(i + 2);
        i += 2;
      }
    }
  }
}

}  // namespace santral::protocol
