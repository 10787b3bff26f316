#include <catch2/catch.hpp>

#include <vector>

#include "config/acl/acl_rules.h"
#include "protocol/command_table.h"
#include "router/acl/access_check.h"

using namespace santral::config;
using namespace santral::router;
using santral::protocol::CommandSpec;

namespace {

Permissions user_with(std::string_view rules) {
  Permissions user = new_acl_user();
  REQUIRE(apply_acl_rules(user, rules).empty());
  return user;
}

AccessVerdict check(const Permissions& user, std::vector<std::string_view> args) {
  const CommandSpec* spec = santral::protocol::find_command(args[0]);
  REQUIRE(spec != nullptr);
  if (!spec->subcommands.empty() && args.size() > 1)
    spec = santral::protocol::find_subcommand(*spec, args[1]);
  REQUIRE(spec != nullptr);
  return check_access(user, *spec, args);
}

}  // namespace

TEST_CASE("access: the command's bit, or its subcommand's") {
  auto user = user_with("on +@read +config|get ~*");
  CHECK(check(user, {"get", "k"}).allowed());
  CHECK(check(user, {"set", "k", "v"}).denial == AccessDenial::Command);
  CHECK(check(user, {"config", "get", "maxmemory"}).allowed());
  CHECK(check(user, {"config", "set", "maxmemory", "1"}).denial == AccessDenial::Command);
  // AUTH and HELLO are always allowed, as Redis's CMD_NO_AUTH commands.
  CHECK(check(user_with("on"), {"auth", "u", "p"}).allowed());
  CHECK(check(user_with("on"), {"hello", "3"}).allowed());
}

TEST_CASE("access: keys by their key spec's flags") {
  auto user = user_with("on +@all %R~src* %W~dst* ~both*");
  CHECK(check(user, {"get", "src1"}).allowed());
  CHECK(check(user, {"get", "dst1"}).denial == AccessDenial::Key);
  CHECK(check(user, {"set", "dst1", "v"}).allowed());
  CHECK(check(user, {"set", "src1", "v"}).denial == AccessDenial::Key);
  // SET's key flags vary (Redis's setGetKeys): with GET it reads the old value too.
  CHECK(check(user, {"set", "dst1", "v", "GET"}).denial == AccessDenial::Key);
  CHECK(check(user, {"set", "both1", "v", "GET"}).allowed());
  // BITFIELD reads only with nothing but GET.
  CHECK(check(user, {"bitfield", "src1", "GET", "u8", "0"}).allowed());
  CHECK(check(user, {"bitfield", "src1", "SET", "u8", "0", "1"}).denial == AccessDenial::Key);
  CHECK(check(user, {"set", "both1", "v"}).allowed());
  // COPY src dst: the source is read (RO ACCESS), the destination written (OW UPDATE).
  CHECK(check(user, {"copy", "src1", "dst1"}).allowed());
  auto verdict = check(user, {"copy", "dst1", "src1"});
  CHECK(verdict.denial == AccessDenial::Key);
  CHECK(verdict.position == 1);
  // LMOVE src dst: both RW, the source ACCESS DELETE, the destination INSERT.
  CHECK(check(user, {"lmove", "src1", "dst1", "LEFT", "RIGHT"}).denial == AccessDenial::Key);
  CHECK(check(user, {"lmove", "both1", "both2", "LEFT", "RIGHT"}).allowed());
  verdict = check(user, {"lmove", "both1", "dst1", "LEFT", "RIGHT"});
  CHECK(verdict.allowed());  // the destination is only inserted into: write is enough
  // EXISTS needs neither read nor write: any matching pattern does.
  CHECK(check(user, {"exists", "src1", "dst1"}).allowed());
  CHECK(check(user, {"exists", "other"}).denial == AccessDenial::Key);
  // A script's declared keys.
  CHECK(check(user, {"eval", "return 1", "1", "other"}).denial == AccessDenial::Key);
  CHECK(check(user, {"eval", "return 1", "1", "both1"}).allowed());
  CHECK(check(user_with("on +@all allkeys"), {"set", "anything", "v"}).allowed());
}

TEST_CASE("access: channels") {
  auto user = user_with("on +@all ~* &news.* &lit[*]");
  CHECK(check(user, {"publish", "news.uk", "m"}).allowed());
  CHECK(check(user, {"publish", "sport", "m"}).denial == AccessDenial::Channel);
  CHECK(check(user, {"spublish", "news.fr", "m"}).allowed());
  CHECK(check(user, {"subscribe", "news.a", "news.b"}).allowed());
  auto verdict = check(user, {"subscribe", "news.a", "sport"});
  CHECK(verdict.denial == AccessDenial::Channel);
  CHECK(verdict.position == 2);
  CHECK(check(user, {"ssubscribe", "news.a"}).allowed());
  // PSUBSCRIBE's pattern must be an allowed pattern, literally.
  CHECK(check(user, {"psubscribe", "news.*"}).allowed());
  CHECK(check(user, {"psubscribe", "news.uk"}).denial == AccessDenial::Channel);
  CHECK(check(user, {"psubscribe", "lit[*]"}).allowed());
  CHECK(check(user, {"unsubscribe", "sport"}).allowed());
  CHECK(check(user_with("on +@all ~*"), {"publish", "x", "m"}).denial == AccessDenial::Channel);
}
