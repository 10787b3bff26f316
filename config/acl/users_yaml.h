#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "config/acl/permissions.h"
#include "config/yaml_fields.h"

namespace santral::config {

// One entry of `users:`: {name, password | password_sha256, rules}. `key` is "users[i]".
std::string read_user_name(const YAML::Node& item, const YamlFields& fields,
                           const std::string& key);
// Its permissions: Redis's new user with `rules:` applied (then `password:` or
// `password_sha256:` added), or, without rules, on +@all ~* &* with its password.
Permissions read_user_permissions(const YAML::Node& item, const YamlFields& fields,
                                  const std::string& key);

}  // namespace santral::config
