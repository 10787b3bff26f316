// The ACL rule parser on arbitrary text: a rule string is either applied or refused with
// Redis's "Error in ACL SETUSER modifier" words; never a crash. An accepted user's ACL LIST
// line parses back to the same permissions, and checking a request against it is safe.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/acl/acl_describe.h"
#include "config/acl/acl_rules.h"
#include "protocol/command_table.h"
#include "router/acl/access_check.h"
#include "tests/fuzz/fuzz_check.h"

using namespace santral;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  config::Permissions user = config::new_acl_user();
  std::string error = config::apply_acl_rules(user, text);
  if (!error.empty()) {
    FUZZ_CHECK(error.rfind("Error in ACL SETUSER modifier '", 0) == 0);
    return 0;
  }
  // ACL LIST's line, without "user <name> ", rebuilds the same permissions; except, as in
  // Redis, after %RW~*, which it writes as ~* (allkeys, after which no pattern may follow).
  bool star_pattern = false;
  for (const auto& pattern : user.keys)
    star_pattern = star_pattern || (pattern.glob == "*" && pattern.access == config::kAllKeyAccess);
  if (star_pattern) return 0;
  std::string line = config::describe_user("u", user);
  config::Permissions again = config::new_acl_user();
  FUZZ_CHECK(config::apply_acl_rules(again, std::string_view(line).substr(7)).empty());
  FUZZ_CHECK(again.commands == user.commands);
  FUZZ_CHECK(again.enabled == user.enabled && again.nopass == user.nopass);
  FUZZ_CHECK(again.passwords == user.passwords);
  FUZZ_CHECK(again.all_keys == user.all_keys && again.keys == user.keys);
  FUZZ_CHECK(again.all_channels == user.all_channels && again.channels == user.channels);
  // A few requests, their arguments taken from the input.
  std::vector<std::string_view> args = {"set", text.substr(0, 8), "v"};
  router::check_access(user, *protocol::find_command("set"), args);
  args = {"copy", text.substr(0, 4), text.substr(size / 2)};
  router::check_access(user, *protocol::find_command("copy"), args);
  args = {"psubscribe", text, text.substr(1 % (size + 1))};
  router::check_access(user, *protocol::find_command("psubscribe"), args);
  return 0;
}
