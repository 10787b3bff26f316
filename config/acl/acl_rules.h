#pragma once

#include <string>
#include <string_view>

#include "config/acl/permissions.h"

namespace santral::config {

// A user as Redis 7.0's ACL SETUSER creates it: off, no password, no commands, no keys, no
// channels (acl-pubsub-default resetchannels).
Permissions new_acl_user();
// What a user without `rules:` may do: on +@all ~* &* (no password yet).
Permissions unrestricted_acl_user();

// Applies one ACL SETUSER rule ("+get", "%R~cache:*", ">secret", ...) to `user`, as Redis does.
// Returns Redis's error ("Error in ACL SETUSER modifier '<rule>': ..."), or "" when applied.
std::string apply_acl_rule(Permissions& user, std::string_view rule);
// Applies the space-separated rules of `rules` left to right; stops at the first error.
std::string apply_acl_rules(Permissions& user, std::string_view rules);

}  // namespace santral::config
