#pragma once

#include "router/routing.h"

namespace santral::router {

// SANTRAL subcommands: Santral's own operations.
void santral_reload(const Routed& routed);    // SANTRAL RELOAD
void santral_shardmap(const Routed& routed);  // SANTRAL SHARDMAP

}  // namespace santral::router
