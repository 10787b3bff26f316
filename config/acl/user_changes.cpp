#include "config/acl/user_changes.h"

#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/acl/acl_describe.h"

namespace santral::config {

namespace {

// Each user's ACL LIST line by name; the default user's password stands in for its line when
// `users:` does not name it.
std::map<std::string, std::string> user_lines(const Config& config) {
  std::map<std::string, std::string> lines;
  lines["default"] = "password " + config.password;
  for (const auto& user : config.users) {
    const auto& limits = user.limits;
    // A change of its limits is a change of the user too.
    lines[user.name] =
        fmt::format("{} limits {} {} {} {} {}", describe_user(user.name, *user.permissions),
                    limits.requests_per_s, limits.burst, limits.max_connections,
                    limits.max_pipeline, limits.wait_ms);
  }
  return lines;
}

}  // namespace

std::string describe_user_changes(const Config& from, const Config& to) {
  auto before = user_lines(from);
  auto after = user_lines(to);
  std::vector<std::string> added, removed, changed;
  for (const auto& [name, line] : after) {
    auto it = before.find(name);
    if (it == before.end())
      added.push_back(name);
    else if (it->second != line)
      changed.push_back(name);
  }
  for (const auto& [name, line] : before)
    if (!after.contains(name)) removed.push_back(name);
  std::vector<std::string> parts;
  if (!added.empty()) parts.push_back(fmt::format("added: {}", fmt::join(added, ", ")));
  if (!removed.empty()) parts.push_back(fmt::format("removed: {}", fmt::join(removed, ", ")));
  if (!changed.empty()) parts.push_back(fmt::format("changed: {}", fmt::join(changed, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace santral::config
