#pragma once

#include <string>
#include <string_view>

#include "config/acl/permissions.h"

namespace santral::config {

// The rules that rebuild `user`'s command bitmap, as Redis 7.0 describes them: "+@all" or
// "-@all", then the categories that fit best, then single commands.
std::string describe_commands(const Permissions& user);
// "~*", or the patterns: "~a* %R~r* %W~w*"; "" when the user has no keys.
std::string describe_keys(const Permissions& user);
// "&*", or the patterns: "&ch*"; "" when the user has none.
std::string describe_channels(const Permissions& user);
// ACL LIST's line: "user <name> on #<hash> ~* &* +@all".
std::string describe_user(std::string_view name, const Permissions& user);

}  // namespace santral::config
