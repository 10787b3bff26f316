#pragma once

#include <string>

#include "config/config.h"

namespace santral::config {

// How the users clients may AUTH as differ from `from` to `to` (`users:`, and `password:`,
// the default user's): "added: ops; removed: reporting; changed: default", or "" when they
// are the same. A user is changed when its ACL LIST line is (its passwords, flags, commands,
// keys or channels).
std::string describe_user_changes(const Config& from, const Config& to);

}  // namespace santral::config
