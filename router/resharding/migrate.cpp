#include "router/resharding/migrate.h"

#include <vector>

#include "protocol/resp_writer.h"
#include "router/backend/shard_login.h"

namespace santral::router {

std::vector<std::string> migrate_arguments(const config::Config& config,
                                           const config::Endpoint& target, int database) {
  std::vector<std::string> args = {"MIGRATE",
                                   target.host,
                                   std::to_string(target.port),
                                   "",
                                   std::to_string(database),
                                   std::to_string(config.resharding.migrate_timeout.count())};
  auto login = shard_login(config.backend);
  if (!login.password.empty()) {
    if (!login.user.empty()) {
      args.insert(args.end(), {"AUTH2", login.user, login.password});
    } else {
      args.insert(args.end(), {"AUTH", login.password});
    }
  }
  return args;
}

std::string migrate_command(const config::Config& config, const config::Endpoint& target,
                            int database, std::span<const std::string_view> keys) {
  auto head = migrate_arguments(config, target, database);
  std::vector<std::string_view> args(head.begin(), head.end());
  args.emplace_back("KEYS");
  args.insert(args.end(), keys.begin(), keys.end());
  std::string out;
  protocol::RespWriter(out).command(args);
  return out;
}

std::chrono::milliseconds migrate_answer_timeout(const config::Config& config) {
  return config.timeouts.request + config.resharding.migrate_timeout * 2;
}

bool migrated(std::string_view reply) {
  return reply.starts_with("+OK") || reply.starts_with("+NOKEY");
}

}  // namespace santral::router
