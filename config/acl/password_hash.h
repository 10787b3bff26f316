#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/acl/permissions.h"

namespace santral::config {

PasswordHash hash_password(std::string_view password);
// 64 lower-case hex digits, as ACL SETUSER's #<hash> wants them; nullopt otherwise.
std::optional<PasswordHash> parse_password_hash(std::string_view hex);
std::string password_hash_hex(const PasswordHash& hash);
// Whether `password` is one of the user's (or the user is nopass); constant time per hash.
bool password_matches(const Permissions& user, std::string_view password);

}  // namespace santral::config
