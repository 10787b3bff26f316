#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// SANTRAL subcommands about hot keys.
void santral_hotkeys(const Routed& routed);  // SANTRAL HOTKEYS [COUNT n]
void santral_salt(const Routed& routed);     // SANTRAL SALT <key> <n> [REPLY estimate|exact]
void santral_unsalt(const Routed& routed);   // SANTRAL UNSALT <key>

}  // namespace santral::router
