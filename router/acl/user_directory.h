#pragma once

#include <memory>
#include <string_view>

#include "config/acl/permissions.h"
#include "config/config.h"
#include "router/runtime/client_state.h"

namespace santral::router {

// The users of a config: those of `users:`, and "default", the user of a bare AUTH (the
// config's `password:`, twemproxy's redis_auth), which may run everything unless `users:`
// names it too.

// The permissions of `name`; nullptr for a default user that is not in `users:` and for an
// unknown user.
const config::Permissions* find_user(const config::Config& config, std::string_view name);

// What the router checks for a client logged in as `name`: nullptr when the user may do
// everything (no check at all), a deny-all set when a reload removed the user (each of its
// commands then answers NOPERM until it authenticates again).
std::shared_ptr<const config::Permissions> restrictions_of(const config::Config& config,
                                                           std::string_view name);

// AUTH's verdict: the user exists, is on, and the password is one of its own.
bool password_valid(const config::Config& config, std::string_view name, std::string_view password);

// Resolves the client's user again when the config's `version` is not the one it was resolved
// under: a reload's new rules apply from the client's next command, as in Redis.
inline void refresh_permissions(ClientState& client, const config::Config& config,
                                std::uint64_t version) {
  if (client.permissions_version == version) return;
  client.permissions = restrictions_of(config, client.user);
  client.permissions_version = version;
}

}  // namespace santral::router
