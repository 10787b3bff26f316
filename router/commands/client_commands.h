#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// CLIENT subcommands, answered by Santral about Santral's clients (not the shards' view of
// Santral's own connections).
void client_getname(const Routed& routed);
void client_setname(const Routed& routed);
void client_id(const Routed& routed);
void client_info(const Routed& routed);
// CLIENT LIST and CLIENT KILL cover every router of the fleet (across_fleet.h); SANTRAL
// CLIENTS LOCAL [LIST|KILL ...] this router's own clients.
void client_list(const Routed& routed);
void client_kill(const Routed& routed);
void santral_clients(const Routed& routed);
void client_unblock(const Routed& routed);
void client_reply(const Routed& routed);
void client_no_evict(const Routed& routed);
// Client-side caching (tracking_commands.cpp).
void client_tracking(const Routed& routed);
void client_caching(const Routed& routed);
void client_getredir(const Routed& routed);
void client_trackinginfo(const Routed& routed);

// Redis's rule for client names: printable ASCII, no spaces.
bool valid_client_name(std::string_view name);

}  // namespace santral::router
