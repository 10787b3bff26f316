#include "router/cluster/shard_acl.h"

#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "protocol/reply_scanner.h"
#include "router/backend/blocking_call.h"

namespace santral::router {

ShardAccount lease_account(std::string_view fleet, std::int64_t lease) {
  std::random_device random;
  std::string password;
  for (int i = 0; i < 4; ++i) password += fmt::format("{:08x}", random());
  return {fmt::format("santral:{}:{:x}", fleet, lease), password};
}

ShardAcl::ShardAcl(ShardAccount admin, std::chrono::milliseconds timeout)
    : admin_(std::move(admin)), timeout_(timeout) {}

std::vector<std::string> ShardAcl::call(
    const config::Endpoint& shard, const std::vector<std::vector<std::string>>& commands) const {
  return blocking_call(shard, {admin_.user, admin_.password}, "backend.username/password", commands,
                       timeout_);
}

std::string ShardAcl::admit(const config::Endpoint& shard, const ShardAccount& account) const {
  try {
    auto found = call(shard, {{"ACL", "GETUSER", account.user}});
    if (protocol::is_error_frame(found[0]))
      return fmt::format("{}: ACL GETUSER {}: {}", shard.text(), account.user,
                         protocol::line_text(found[0]));
    if (!is_null_reply(found[0])) return "";  // made before, or shut out: left as it is
    auto made = call(shard, {{"ACL", "SETUSER", account.user, "reset", "on", ">" + account.password,
                              "~*", "&*", "+@all"}});
    if (protocol::is_error_frame(made[0]))
      return fmt::format("{}: ACL SETUSER {}: {}", shard.text(), account.user,
                         protocol::line_text(made[0]));
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string ShardAcl::shut_out(const config::Endpoint& shard, const std::string& user) const {
  try {
    auto replies = call(shard, {{"ACL", "SETUSER", user, "off"}, {"CLIENT", "KILL", "USER", user}});
    for (const auto& reply : replies)
      if (protocol::is_error_frame(reply))
        return fmt::format("{}: {}", shard.text(), protocol::line_text(reply));
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace santral::router
