#pragma once

#include <string_view>

#include "protocol/request.h"
#include "router/routes/routing.h"
#include "router/runtime/plan.h"

namespace santral::router {

class RequestContext;

// The ACL subcommands Santral answers from its config's users (the rest are refused: the
// users come from the config file), and the ACL LOG entries of what was refused.

void acl_list(const Routed& routed);     // ACL LIST
void acl_users(const Routed& routed);    // ACL USERS
void acl_getuser(const Routed& routed);  // ACL GETUSER name
void acl_cat(const Routed& routed);      // ACL CAT [category]
void acl_dryrun(const Routed& routed);   // ACL DRYRUN user command [arg ...]
void acl_log(const Routed& routed);      // ACL LOG [count | RESET]

// Whether the plan was refused by the client's ACL rules (NOPERM).
bool denied_by_acl(const Plan& plan);
// Records a NOPERM denial of `request` in the ACL LOG.
void log_denial(RequestContext& client, const protocol::Request& request, const Plan& plan);
// Records a failed AUTH (or HELLO ... AUTH) as `user`.
void log_auth_failure(RequestContext& client, std::string_view user);

}  // namespace santral::router
