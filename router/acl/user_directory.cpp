#include "router/acl/user_directory.h"

#include "config/acl/acl_rules.h"
#include "config/acl/password_hash.h"

namespace santral::router {

const config::Permissions* find_user(const config::Config& config, std::string_view name) {
  for (const auto& user : config.users)
    if (user.name == name) return user.permissions.get();
  return nullptr;
}

std::shared_ptr<const config::Permissions> restrictions_of(const config::Config& config,
                                                           std::string_view name) {
  for (const auto& user : config.users)
    if (user.name == name) return user.permissions->unrestricted() ? nullptr : user.permissions;
  if (name == "default") return nullptr;
  static const auto removed = std::make_shared<const config::Permissions>(config::new_acl_user());
  return removed;
}

bool password_valid(const config::Config& config, std::string_view name,
                    std::string_view password) {
  if (const config::Permissions* user = find_user(config, name))
    return user->enabled && config::password_matches(*user, password);
  return name == "default" && !config.password.empty() && password == config.password;
}

}  // namespace santral::router
