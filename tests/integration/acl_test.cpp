// ACL rules through Santral, proved against a real redis-server 7.0: the same users are made
// there with ACL SETUSER, the same commands run through both, and the replies must be the same
// (errors word for word).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

struct TestUser {
  std::string name;
  std::string rules;  // ACL SETUSER's, also the config's `rules:`
};

const std::vector<TestUser> kUsers = {
    {"reader", "on >rpw +@read -@dangerous ~* resetchannels"},
    {"writer", "on >wpw +@all -@admin %R~src:* %W~dst:* ~both:* &news.* allchannels"},
    {"limited",
     "on >lpw -@all +get +set +config|get +multi +exec +eval +publish +subscribe "
     "+psubscribe +acl|whoami +acl|cat +acl|dryrun +acl|getuser +acl|list ~k:* &chan.*"},
};

std::string users_yaml(const std::vector<TestUser>& users) {
  std::string yaml = "users:\n  - name: admin\n    password: adminpw\n";
  for (const auto& user : users)
    yaml += "  - name: " + user.name + "\n    rules: \"" + user.rules + "\"\n";
  return yaml;
}

std::string text(const Reply& reply) {
  std::string out;
  switch (reply.type) {
    case Reply::Type::String:
      return "$" + reply.str;
    case Reply::Type::Status:
      return "+" + reply.str;
    case Reply::Type::Error:
      return "-" + reply.str;
    case Reply::Type::Integer:
      return ":" + std::to_string(reply.integer);
    case Reply::Type::Nil:
      return "nil";
    case Reply::Type::Array:
      out = "[";
      for (const auto& e : reply.elements) out += text(e) + ",";
      return out + "]";
  }
  return out;
}

// ACL LIST's lines with their words sorted: Redis lists single commands in its hash table's
// order, Santral in its command table's. Santral's default user cannot log in once `users:`
// exist without `password:` (off); the reference's stays nopass, so it is left out.
std::string words_sorted(const Reply& reply) {
  std::string out;
  for (const auto& line : reply.elements) {
    if (line.str.rfind("user default ", 0) == 0) continue;
    std::istringstream in(line.str);
    std::vector<std::string> words;
    for (std::string word; in >> word;) words.push_back(word);
    std::sort(words.begin(), words.end());
    for (const auto& word : words) out += word + " ";
    out += "\n";
  }
  return out;
}

// GETUSER's commands field with its words sorted (single commands: see above).
Reply words_sorted_line(const Reply& field) {
  Reply line;
  line.type = Reply::Type::Array;
  line.elements.push_back(field);
  Reply sorted = field;
  sorted.str = words_sorted(line);
  return sorted;
}

std::vector<std::string> sorted(const Reply& reply) {
  std::vector<std::string> out;
  for (const auto& e : reply.elements) out.push_back(text(e));
  std::sort(out.begin(), out.end());
  return out;
}

void authenticate(RedisClient& client, const std::string& user, const std::string& password) {
  REQUIRE(client.command({"AUTH", user, password}).is_ok());
}

}  // namespace

TEST_CASE("ACL rules: Santral answers as a redis-server with the same users") {
  std::vector<TestUser> users = kUsers;
  users.push_back({"disabled", "off >dpw +@all ~*"});
  // One shard: the keys below need not share one, as they do not on the reference server.
  Cluster cluster(1, users_yaml(users));
  RedisServer reference;
  auto setup = reference.client();
  REQUIRE(
      setup.command({"ACL", "SETUSER", "admin", "on", ">adminpw", "+@all", "~*", "&*"}).is_ok());
  for (const auto& user : users) {
    std::vector<std::string> args = {"ACL", "SETUSER", user.name};
    std::istringstream rules(user.rules);
    for (std::string rule; rules >> rule;) args.push_back(rule);
    REQUIRE(setup.command(args).is_ok());
  }

  struct Case {
    std::string user, password;
    std::vector<std::vector<std::string>> commands;
  };
  const std::vector<Case> cases = {
      {"reader",
       "rpw",
       {{"GET", "a"},
        {"SET", "a", "1"},
        {"MGET", "a", "b"},
        {"CONFIG", "GET", "maxmemory"},
        {"FLUSHALL"},
        {"PUBLISH", "x", "m"},
        {"ACL", "WHOAMI"}}},
      {"writer",
       "wpw",
       {{"SET", "dst:1", "v"},
        {"GET", "dst:1"},
        {"SET", "src:1", "v"},
        {"GET", "src:1"},
        {"COPY", "src:1", "dst:2"},
        {"COPY", "dst:1", "src:2"},
        {"LMOVE", "src:l", "dst:l", "LEFT", "RIGHT"},
        {"LMOVE", "both:l", "dst:l", "LEFT", "RIGHT"},
        {"SET", "both:1", "v"},
        {"GET", "both:1"},
        {"EVAL", "return 1", "1", "other"},
        {"EVAL", "return 1", "1", "both:1"},
        {"CONFIG", "SET", "maxmemory", "0"},
        {"PUBLISH", "anything", "m"}}},
      {"limited",
       "lpw",
       {{"GET", "k:1"},
        {"GET", "other"},
        {"DEL", "k:1"},
        {"CONFIG", "GET", "maxmemory"},
        {"CONFIG", "SET", "maxmemory", "0"},
        {"PUBLISH", "chan.a", "m"},
        {"PUBLISH", "other", "m"},
        {"EVAL", "return 1", "1", "other"},
        {"MULTI"},
        {"SET", "k:1", "v"},
        {"DEL", "k:1"},
        {"EXEC"},
        {"ACL", "WHOAMI"},
        {"ACL", "LIST"},
        {"ACL", "CAT"},
        {"ACL", "CAT", "nosuch"},
        {"ACL", "CAT", "hyperloglog"},
        {"ACL", "DRYRUN", "reader", "set", "k", "v"},
        {"ACL", "DRYRUN", "reader", "get", "k"},
        {"ACL", "DRYRUN", "writer", "get", "dst:1"},
        {"ACL", "DRYRUN", "writer", "set", "dst:1", "v"},
        {"ACL", "DRYRUN", "limited", "publish", "other", "m"},
        {"ACL", "DRYRUN", "nosuch", "get", "a"},
        {"ACL", "DRYRUN", "reader", "nosuch"},
        {"ACL", "DRYRUN", "reader", "get"},
        {"ACL", "GETUSER", "writer"},
        {"ACL", "GETUSER", "reader"},
        {"ACL", "GETUSER", "nosuch"},
        {"AUTH", "limited", "wrong"},
        {"AUTH", "disabled", "dpw"}}},
  };
  for (const auto& c : cases) {
    auto through = cluster.client();
    auto direct = reference.client();
    authenticate(through, c.user, c.password);
    authenticate(direct, c.user, c.password);
    for (const auto& command : c.commands) {
      std::string line;
      for (const auto& arg : command) line += arg + " ";
      INFO(c.user << ": " << line);
      auto ours = through.command(command);
      auto theirs = direct.command(command);
      if (command[0] == "ACL" && command[1] == "LIST" && !ours.is_error()) {
        CHECK(words_sorted(ours) == words_sorted(theirs));
      } else if (command[0] == "ACL" && command[1] == "GETUSER" && ours.elements.size() == 12 &&
                 theirs.elements.size() == 12) {
        for (auto* reply : {&ours, &theirs})
          reply->elements[5] = words_sorted_line(reply->elements[5]);
        CHECK(text(ours) == text(theirs));
      } else if (command[0] == "ACL" && command[1] == "CAT" && command.size() == 3 &&
                 !ours.is_error()) {
        CHECK(sorted(ours) == sorted(theirs));  // in table order, Redis's in hash order
      } else {
        CHECK(text(ours) == text(theirs));
      }
    }
  }

  // Channels: SUBSCRIBE globs, PSUBSCRIBE's pattern must be allowed literally. Each on a
  // connection of its own: an allowed one leaves it subscribed.
  for (const auto& command : std::vector<std::vector<std::string>>{{"SUBSCRIBE", "other"},
                                                                   {"PSUBSCRIBE", "chan.a"},
                                                                   {"PSUBSCRIBE", "chan.*"},
                                                                   {"SUBSCRIBE", "chan.b"},
                                                                   {"PSUBSCRIBE", "other*"}}) {
    auto through = cluster.client();
    auto direct = reference.client();
    authenticate(through, "limited", "lpw");
    authenticate(direct, "limited", "lpw");
    INFO(command[0] << " " << command[1]);
    CHECK(text(through.command(command)) == text(direct.command(command)));
  }

  // ACL LOG: the newest denial is the same on both (its age and client differ).
  auto admin = cluster.client();
  authenticate(admin, "admin", "adminpw");
  auto ours = admin.command({"ACL", "LOG", "1"});
  auto theirs = setup.command({"ACL", "LOG", "1"});
  REQUIRE(ours.elements.size() == 1);
  REQUIRE(theirs.elements.size() == 1);
  REQUIRE(ours.elements[0].elements.size() == 14);
  for (std::size_t field = 0; field < 10; ++field)
    CHECK(text(ours.elements[0].elements[field]) == text(theirs.elements[0].elements[field]));
  CHECK(ours.elements[0].elements[7].str == "other*");
  CHECK(admin.command({"ACL", "LOG", "RESET"}).is_ok());
  CHECK(admin.command({"ACL", "LOG"}).elements.empty());
  CHECK(admin.command({"AUTH", "admin", "nope"}).is_error());
  auto auth = admin.command({"ACL", "LOG"});
  REQUIRE(auth.elements.size() == 1);
  CHECK(auth.elements[0].elements[3].str == "auth");
  CHECK(auth.elements[0].elements[9].str == "admin");
}

TEST_CASE("ACL rules: a reload applies new rules to connections already open") {
  std::vector<TestUser> users = {{"app", "on >apw +@all ~*"}};
  Cluster cluster(1, users_yaml(users));
  auto app = cluster.client();
  authenticate(app, "app", "apw");
  CHECK(app.command({"SET", "k", "v"}).is_ok());

  std::string config = [&] {
    std::ifstream in(cluster.santral().config_path());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  auto at = config.find("+@all ~*");
  REQUIRE(at != std::string::npos);
  config.replace(at, 8, "+@all -@write ~*");
  std::ofstream(cluster.santral().config_path()) << config;
  auto admin = cluster.client();
  authenticate(admin, "admin", "adminpw");
  CHECK(admin.command({"SANTRAL", "RELOAD"}).type == Reply::Type::Status);

  CHECK(app.command({"SET", "k", "v"}).str ==
        "NOPERM this user has no permissions to run the 'set' command");
  CHECK(app.command({"GET", "k"}).str == "v");
}
