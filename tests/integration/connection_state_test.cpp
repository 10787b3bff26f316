// What Santral remembers about a client connection, and answers itself as Redis would: AUTH
// and users, HELLO and RESP3, SELECT, CLIENT *, CLIENT REPLY, RESET, QUIT and COMMAND.
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/process.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;

namespace {

// RESP2 command bytes, for RawConnection.
std::string resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// Sends one request and returns exactly as many bytes as `expected` has (or what came before a
// 2 s timeout).
std::string exchange(RawConnection& raw, const std::vector<std::string>& args,
                     const std::string& expected) {
  raw.send(resp(args));
  return raw.read_some(expected.size(), 2000);
}

// Reads a RESP reply that ends with `tail` (HELLO's map ends with its modules array).
const std::string kHelloTail = "$7\r\nmodules\r\n*0\r\n";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// "name=value" of one CLIENT LIST / CLIENT INFO line.
std::string field(const std::string& line, const std::string& name) {
  std::string tag = name + "=";
  auto at = line.find(" " + tag);
  if (line.rfind(tag, 0) == 0)
    at = 0;
  else if (at != std::string::npos)
    ++at;
  if (at == std::string::npos) return "";
  auto end = line.find(' ', at);
  return line.substr(at + tag.size(),
                     end == std::string::npos ? std::string::npos : end - at - tag.size());
}

// Santral with clients that must AUTH, in front of shards that require a password of their own
// ("pw"). SantralProcess and RedisServer wait for a PONG to their start-up PING, which a server
// that requires AUTH never sends; so the shards get their password once they are up, and
// Santral is started here and is ready when it answers NOAUTH.
class GuardedCluster {
 public:
  static constexpr const char* kShardPassword = "pw";

  explicit GuardedCluster(std::size_t shards, const std::string& extra_yaml)
      : port_(free_loopback_port()) {
    std::vector<const RedisServer*> servers;
    for (std::size_t i = 0; i < shards; ++i) {
      shards_.push_back(std::make_unique<RedisServer>());
      REQUIRE(shards_.back()
                  ->client()
                  .command({"CONFIG", "SET", "requirepass", kShardPassword})
                  .is_ok());
      servers.push_back(shards_.back().get());
    }
    std::string yaml =
        "listen: 127.0.0.1:" + std::to_string(port_) + "\n" +
        SantralProcess::config_for(servers, "backend:\n  password: pw\n" + extra_yaml);
    config_path_ = dir_.write("santral.yaml", yaml);
    map_ =
        std::make_unique<santral::placement::ShardMap>(santral::config::load_config(config_path_));
    process_ = std::make_unique<Process>(
        std::vector<std::string>{santral_binary(), "--config", config_path_.string()},
        (dir_.path() / "santral.log").string());
    bool up = wait_until(
        [&] {
          if (!process_->running()) return true;
          try {
            return RedisClient(port_, 200).command({"PING"}).str ==
                   "NOAUTH Authentication required.";
          } catch (const std::exception&) {
            return false;
          }
        },
        10000);
    if (!up || !process_->running()) FAIL("santral did not start: " << process_->log());
  }

  int port() const { return port_; }
  RedisClient client() const { return RedisClient(port_); }
  std::size_t owner(const std::string& key) const { return map_->shard_for_key(key); }
  std::size_t size() const { return shards_.size(); }
  // A client of shard i, authenticated with the shards' own password.
  RedisClient shard_client(std::size_t i) const {
    RedisClient client(shards_[i]->port());
    REQUIRE(client.command({"AUTH", kShardPassword}).is_ok());
    return client;
  }

 private:
  int port_;
  TempDir dir_;
  std::filesystem::path config_path_;
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<santral::placement::ShardMap> map_;
  std::unique_ptr<Process> process_;
};

const std::string kUsers =
    "password: s3cret\n"
    "users:\n"
    "  - {name: alice, password: wonderland}\n";

}  // namespace

TEST_CASE(
    "with a password set, commands wait for AUTH, users can log in, and AUTH never reaches a "
    "shard") {
  GuardedCluster cluster(2, kUsers);
  auto client = cluster.client();
  CHECK(client.command({"GET", "k"}).str == "NOAUTH Authentication required.");
  CHECK(client.command({"ACL", "WHOAMI"}).str == "NOAUTH Authentication required.");
  CHECK(client.command({"AUTH", "wrong"}).str ==
        "WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(client.command({"AUTH", "alice", "s3cret"}).str ==
        "WRONGPASS invalid username-password pair or user is disabled.");
  CHECK(client.command({"GET", "k"}).str == "NOAUTH Authentication required.");

  CHECK(client.command({"AUTH", "s3cret"}).is_ok());
  CHECK(client.command({"ACL", "WHOAMI"}).str == "default");
  // Santral reaches the shards with backend.password.
  REQUIRE(client.command({"SET", "k", "v"}).is_ok());
  CHECK(client.command({"GET", "k"}).str == "v");
  CHECK(cluster.shard_client(cluster.owner("k")).command({"EXISTS", "k"}).integer == 1);

  CHECK(client.command({"AUTH", "alice", "wonderland"}).is_ok());
  CHECK(client.command({"ACL", "WHOAMI"}).str == "alice");
  CHECK(client.command({"AUTH", "alice", "nope"}).str ==
        "WRONGPASS invalid username-password pair or user is disabled.");

  // HELLO needs authentication first, or brings it along.
  RawConnection raw(cluster.port());
  std::string refused =
      "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
      "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
      "RESP protocol version at the same time\r\n";
  CHECK(exchange(raw, {"HELLO", "3"}, refused) == refused);
  raw.send(resp({"HELLO", "3", "AUTH", "alice", "wonderland", "SETNAME", "app"}));
  std::string hello = raw.read_until(kHelloTail);
  CHECK(hello.rfind("%7\r\n", 0) == 0);
  CHECK(hello.find("$5\r\nproto\r\n:3\r\n") != std::string::npos);
  CHECK(exchange(raw, {"CLIENT", "GETNAME"}, "$3\r\napp\r\n") == "$3\r\napp\r\n");
  CHECK(exchange(raw, {"ACL", "WHOAMI"}, "$5\r\nalice\r\n") == "$5\r\nalice\r\n");
  CHECK(exchange(raw, {"GET", "k"}, "$1\r\nv\r\n") == "$1\r\nv\r\n");

  // Every client AUTH above would have failed on the shards (their password is "pw"), and a
  // shard logs each failed AUTH.
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    INFO("shard " << s);
    auto log = cluster.shard_client(s).command({"ACL", "LOG"});
    CHECK(log.type == Reply::Type::Array);
    CHECK(log.elements.empty());
  }
}

TEST_CASE("with a password set, RESET makes the client AUTH again") {
  GuardedCluster cluster(2, kUsers);
  auto client = cluster.client();
  REQUIRE(client.command({"AUTH", "alice", "wonderland"}).is_ok());
  REQUIRE(client.command({"SET", "k", "v"}).is_ok());
  CHECK(client.command({"RESET"}).str == "RESET");
  CHECK(client.command({"GET", "k"}).str == "NOAUTH Authentication required.");
  CHECK(client.command({"AUTH", "s3cret"}).is_ok());
  CHECK(client.command({"ACL", "WHOAMI"}).str == "default");
  CHECK(client.command({"GET", "k"}).str == "v");
}

TEST_CASE("without a password, AUTH <password> is refused as by Redis and commands need no AUTH") {
  Cluster cluster(2);
  auto client = cluster.client();
  CHECK(client.command({"SET", "k", "v"}).is_ok());
  auto auth = client.command({"AUTH", "x"});
  CHECK(auth.is_error());
  CHECK(auth.str ==
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
  CHECK(client.command({"ACL", "WHOAMI"}).str == "default");
  CHECK(client.command({"GET", "k"}).str == "v");
  for (std::size_t s = 0; s < cluster.size(); ++s)
    CHECK(cluster.shard(s).command_calls("auth") == 0);
}

TEST_CASE("HELLO 2 answers a flat array, HELLO 3 a map, HELLO 4 NOPROTO") {
  Cluster cluster(2);
  auto client = cluster.client();
  long long id = client.command({"CLIENT", "ID"}).integer;
  auto hello = client.command({"HELLO", "2"});
  REQUIRE(hello.type == Reply::Type::Array);
  REQUIRE(hello.elements.size() == 14);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < 14; i += 2) names.push_back(hello.elements[i].str);
  CHECK(names ==
        std::vector<std::string>{"server", "version", "proto", "id", "mode", "role", "modules"});
  CHECK(hello.elements[1].str == "redis");
  CHECK(!hello.elements[3].str.empty());
  CHECK(hello.elements[5].integer == 2);
  CHECK(hello.elements[7].integer == id);
  CHECK(hello.elements[9].str == "standalone");
  CHECK(hello.elements[11].str == "master");
  CHECK(hello.elements[13].type == Reply::Type::Array);
  CHECK(hello.elements[13].elements.empty());

  auto refused = client.command({"HELLO", "4"});
  CHECK(refused.is_error());
  CHECK(refused.str == "NOPROTO sorry, this protocol version is not supported");
  CHECK(client.command({"PING"}).str == "PONG");  // still RESP2

  RawConnection raw(cluster.santral().port());
  raw.send(resp({"HELLO", "3"}));
  std::string map = raw.read_until(kHelloTail);
  CHECK(map.rfind("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n", 0) == 0);
  CHECK(map.find("$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:") != std::string::npos);
  CHECK(map.find("$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n" +
                 kHelloTail) != std::string::npos);
}

TEST_CASE("after HELLO 3 replies are RESP3, including those merged from several shards") {
  Cluster cluster(4);
  auto setup = cluster.client();
  std::string hash = cluster.key_on(0, "hash");
  std::string set = cluster.key_on(1, "set");
  std::string zset = cluster.key_on(2, "zset");
  std::string on0 = cluster.key_on(0, "str");
  std::string on1 = cluster.key_on(1, "str");
  std::string missing2 = cluster.key_on(2, "missing");
  std::string missing3 = cluster.key_on(3, "missing");
  REQUIRE(setup.command({"HSET", hash, "f", "v"}).integer == 1);
  REQUIRE(setup.command({"SADD", set, "m"}).integer == 1);
  REQUIRE(setup.command({"ZADD", zset, "1.5", "m"}).integer == 1);
  REQUIRE(setup.command({"SET", on0, "zero"}).is_ok());
  REQUIRE(setup.command({"SET", on1, "one"}).is_ok());

  RawConnection raw(cluster.santral().port());
  raw.send(resp({"HELLO", "3"}));
  REQUIRE(raw.read_until(kHelloTail).rfind("%7\r\n", 0) == 0);

  CHECK(exchange(raw, {"HGETALL", hash}, "%1\r\n$1\r\nf\r\n$1\r\nv\r\n") ==
        "%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
  CHECK(exchange(raw, {"GET", missing2}, "_\r\n") == "_\r\n");
  CHECK(exchange(raw, {"SMEMBERS", set}, "~1\r\n$1\r\nm\r\n") == "~1\r\n$1\r\nm\r\n");
  CHECK(exchange(raw, {"ZSCORE", zset, "m"}, ",1.5\r\n") == ",1.5\r\n");
  std::string mget = "*4\r\n$4\r\nzero\r\n_\r\n$3\r\none\r\n_\r\n";
  CHECK(exchange(raw, {"MGET", on0, missing2, on1, missing3}, mget) == mget);
  CHECK(exchange(raw, {"DEL", on0, on1, missing2, missing3, hash}, ":3\r\n") == ":3\r\n");
  CHECK(!cluster.shard(0).has_key(on0));
  CHECK(!cluster.shard(1).has_key(on1));
  CHECK(!cluster.shard(0).has_key(hash));
  CHECK(cluster.shard(1).has_key(set));
}

TEST_CASE("SELECT n puts keys in database n of the owning shard") {
  Cluster cluster(4);
  auto client = cluster.client();
  std::string key = cluster.key_on(2, "selected");
  REQUIRE(client.command({"SELECT", "3"}).is_ok());
  REQUIRE(client.command({"SET", key, "in-3"}).is_ok());
  CHECK(client.command({"GET", key}).str == "in-3");

  auto owner = cluster.shard(2).client();
  REQUIRE(owner.command({"SELECT", "3"}).is_ok());
  CHECK(owner.command({"EXISTS", key}).integer == 1);
  for (std::size_t s = 0; s < 4; ++s) {
    INFO("shard " << s);
    CHECK(cluster.shard(s).dbsize() == 0);  // database 0 is untouched
    if (s == 2) continue;
    auto other = cluster.shard(s).client();
    REQUIRE(other.command({"SELECT", "3"}).is_ok());
    CHECK(other.command({"DBSIZE"}).integer == 0);
  }

  REQUIRE(client.command({"SELECT", "0"}).is_ok());
  CHECK(client.command({"GET", key}).is_nil());
  auto out_of_range = client.command({"SELECT", "16"});
  CHECK(out_of_range.str ==
        "ERR DB index is out of range (Santral serves databases 0 to 15; see `databases` in its "
        "config)");
  CHECK(client.command({"SELECT", "x"}).str == "ERR value is not an integer or out of range");
  // A refused SELECT leaves the database as it was.
  CHECK(client.command({"GET", key}).is_nil());
  REQUIRE(client.command({"SELECT", "15"}).is_ok());
  REQUIRE(client.command({"SET", key, "in-15"}).is_ok());
  REQUIRE(owner.command({"SELECT", "15"}).is_ok());
  CHECK(owner.command({"GET", key}).str == "in-15");
}

TEST_CASE("CLIENT SETNAME, GETNAME, ID, INFO, GETREDIR and NO-EVICT") {
  Cluster cluster(2);
  auto client = cluster.client();
  auto other = cluster.client();
  CHECK(client.command({"CLIENT", "GETNAME"}).is_nil());
  CHECK(client.command({"CLIENT", "SETNAME", "worker-7"}).is_ok());
  CHECK(client.command({"CLIENT", "GETNAME"}).str == "worker-7");
  CHECK(client.command({"CLIENT", "SETNAME", "has space"}).is_error());
  CHECK(client.command({"CLIENT", "GETNAME"}).str == "worker-7");

  auto id = client.command({"CLIENT", "ID"});
  REQUIRE(id.type == Reply::Type::Integer);
  CHECK(id.integer > 0);
  CHECK(client.command({"CLIENT", "ID"}).integer == id.integer);
  CHECK(other.command({"CLIENT", "ID"}).integer != id.integer);

  auto info = client.command({"CLIENT", "INFO"});
  REQUIRE(info.type == Reply::Type::String);
  CHECK(info.str.back() == '\n');
  CHECK(field(info.str, "id") == std::to_string(id.integer));
  CHECK(field(info.str, "name") == "worker-7");

  auto redir = client.command({"CLIENT", "GETREDIR"});
  CHECK(redir.type == Reply::Type::Integer);
  CHECK(redir.integer == -1);
  CHECK(client.command({"CLIENT", "NO-EVICT", "on"}).is_ok());
  CHECK(client.command({"CLIENT", "NO-EVICT", "off"}).is_ok());
}

TEST_CASE("CLIENT LIST and CLIENT KILL reach clients on every worker") {
  Cluster cluster(2, "workers: 2\n");
  constexpr int kClients = 6;
  std::vector<RedisClient> clients;
  std::vector<long long> ids;
  std::vector<std::string> addrs;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(cluster.client());
    REQUIRE(clients.back().command({"CLIENT", "SETNAME", "c" + std::to_string(i)}).is_ok());
    ids.push_back(clients.back().command({"CLIENT", "ID"}).integer);
    addrs.push_back(field(clients.back().command({"CLIENT", "INFO"}).str, "addr"));
  }
  CHECK(std::set<long long>(ids.begin(), ids.end()).size() == kClients);

  // Whichever worker a client is on, it sees every other client.
  for (int i = 0; i < kClients; ++i) {
    INFO("asked by client " << i);
    auto list = lines(clients[i].command({"CLIENT", "LIST"}).str);
    CHECK(list.size() == kClients);
    std::set<std::string> seen;
    for (const auto& line : list) seen.insert(field(line, "id") + "/" + field(line, "name"));
    for (int j = 0; j < kClients; ++j)
      CHECK(seen.count(std::to_string(ids[j]) + "/c" + std::to_string(j)) == 1);
  }
  auto one = lines(clients[0].command({"CLIENT", "LIST", "ID", std::to_string(ids[3])}).str);
  REQUIRE(one.size() == 1);
  CHECK(field(one[0], "id") == std::to_string(ids[3]));
  CHECK(field(one[0], "addr") == addrs[3]);

  CHECK(clients[0].command({"CLIENT", "KILL", "ID", std::to_string(ids[1])}).integer == 1);
  CHECK_THROWS(clients[1].command({"PING"}));
  CHECK(clients[0].command({"CLIENT", "KILL", "ADDR", addrs[2]}).integer == 1);
  CHECK_THROWS(clients[2].command({"PING"}));
  CHECK(clients[0].command({"CLIENT", "KILL", addrs[4]}).is_ok());
  CHECK_THROWS(clients[4].command({"PING"}));
  CHECK(clients[0].command({"CLIENT", "KILL", "ID", "999999"}).integer == 0);
  CHECK(clients[0].command({"CLIENT", "KILL", "127.0.0.1:1"}).str == "ERR No such client");

  // The survivors are untouched, and the killed ones are gone from the list.
  for (int i : {0, 3, 5}) CHECK(clients[i].command({"PING"}).str == "PONG");
  auto list = lines(clients[5].command({"CLIENT", "LIST"}).str);
  std::set<std::string> left;
  for (const auto& line : list) left.insert(field(line, "id"));
  CHECK(left == std::set<std::string>{std::to_string(ids[0]), std::to_string(ids[3]),
                                      std::to_string(ids[5])});
}

TEST_CASE("CLIENT REPLY OFF, SKIP and ON") {
  Cluster cluster(2);
  RawConnection raw(cluster.santral().port());
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  // PING closes every exchange: all bytes before its +PONG are the replies Santral did send.
  raw.send(resp({"CLIENT", "REPLY", "OFF"}) + resp({"SET", a, "1"}) + resp({"GET", a}) +
           resp({"CLIENT", "REPLY", "ON"}) + resp({"GET", a}) + resp({"PING"}));
  std::string expected = "+OK\r\n$1\r\n1\r\n+PONG\r\n";
  CHECK(raw.read_some(expected.size()) == expected);
  CHECK(cluster.shard(0).has_key(a));  // the silenced SET did run

  raw.send(resp({"CLIENT", "REPLY", "SKIP"}) + resp({"SET", b, "2"}) + resp({"GET", b}) +
           resp({"PING"}));
  expected = "$1\r\n2\r\n+PONG\r\n";
  CHECK(raw.read_some(expected.size()) == expected);
  CHECK(cluster.shard(1).has_key(b));

  // SKIP silences a reply merged from several shards too, and only that one.
  raw.send(resp({"CLIENT", "REPLY", "SKIP"}) + resp({"MGET", a, b}) + resp({"MGET", a, b}) +
           resp({"PING"}));
  expected = "*2\r\n$1\r\n1\r\n$1\r\n2\r\n+PONG\r\n";
  CHECK(raw.read_some(expected.size()) == expected);
}

TEST_CASE(
    "RESET: name, protocol, database, transaction and subscriptions back to a fresh connection") {
  Cluster cluster(4);
  RawConnection raw(cluster.santral().port());
  std::string key = cluster.key_on(1, "db5");
  std::string queued = cluster.key_on(2, "queued");
  std::string channel = cluster.key_on(3, "chan");

  CHECK(exchange(raw, {"CLIENT", "SETNAME", "app"}, "+OK\r\n") == "+OK\r\n");
  raw.send(resp({"HELLO", "3"}));
  REQUIRE(raw.read_until(kHelloTail).rfind("%7\r\n", 0) == 0);
  CHECK(exchange(raw, {"SELECT", "5"}, "+OK\r\n") == "+OK\r\n");
  CHECK(exchange(raw, {"SET", key, "v"}, "+OK\r\n") == "+OK\r\n");
  CHECK(exchange(raw, {"MULTI"}, "+OK\r\n") == "+OK\r\n");
  CHECK(exchange(raw, {"SET", queued, "1"}, "+QUEUED\r\n") == "+QUEUED\r\n");
  CHECK(exchange(raw, {"RESET"}, "+RESET\r\n") == "+RESET\r\n");

  // RESP2 again: a missing name is $-1, not RESP3's _.
  CHECK(exchange(raw, {"CLIENT", "GETNAME"}, "$-1\r\n") == "$-1\r\n");
  // Database 0 again: the key written in database 5 is not there.
  CHECK(exchange(raw, {"GET", key}, "$-1\r\n") == "$-1\r\n");
  // The transaction is gone, and its command never ran.
  CHECK(exchange(raw, {"EXEC"}, "-ERR EXEC without MULTI\r\n") == "-ERR EXEC without MULTI\r\n");
  CHECK(!cluster.shard(2).has_key(queued));
  auto db5 = cluster.shard(1).client();
  REQUIRE(db5.command({"SELECT", "5"}).is_ok());
  CHECK(db5.command({"EXISTS", key}).integer == 1);

  std::string confirmation = "*3\r\n$9\r\nsubscribe\r\n" + bulk(channel) + ":1\r\n";
  CHECK(exchange(raw, {"SUBSCRIBE", channel}, confirmation) == confirmation);
  CHECK(exchange(raw, {"RESET"}, "+RESET\r\n") == "+RESET\r\n");
  // Not in pub/sub mode any more, and the shard has let go of the subscription.
  CHECK(exchange(raw, {"GET", key}, "$-1\r\n") == "$-1\r\n");
  auto owner = cluster.shard(3).client();
  CHECK(wait_until(
      [&] {
        return owner.command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer == 0;
      },
      5000));
  CHECK(cluster.client().command({"PUBLISH", channel, "nobody"}).integer == 0);
}

TEST_CASE("RESET right behind SUBSCRIBE or a queued command keeps their replies") {
  Cluster cluster(4);
  RawConnection raw(cluster.santral().port());
  std::string channel = cluster.key_on(1, "chan");
  std::string queued = cluster.key_on(2, "queued");

  // Pipelined, as a client library that resets a pooled connection may send them. Redis answers
  // every request in order before resetting.
  raw.send(resp({"SUBSCRIBE", channel}) + resp({"RESET"}) + resp({"PING"}));
  std::string expected = "*3\r\n$9\r\nsubscribe\r\n" + bulk(channel) + ":1\r\n+RESET\r\n+PONG\r\n";
  CHECK(raw.read_some(expected.size()) == expected);

  RawConnection second(cluster.santral().port());
  second.send(resp({"MULTI"}) + resp({"SET", queued, "1"}) + resp({"RESET"}) + resp({"EXEC"}));
  expected = "+OK\r\n+QUEUED\r\n+RESET\r\n-ERR EXEC without MULTI\r\n";
  CHECK(second.read_some(expected.size()) == expected);
  CHECK(!cluster.shard(2).has_key(queued));
}

TEST_CASE("QUIT answers OK and closes the connection") {
  Cluster cluster(2);
  RawConnection raw(cluster.santral().port());
  std::string key = cluster.key_on(0, "before-quit");
  raw.send(resp({"SET", key, "1"}) + resp({"QUIT"}) + resp({"SET", key, "2"}));
  std::string received;
  CHECK(raw.wait_closed(received));
  CHECK(received == "+OK\r\n+OK\r\n");
  // Nothing after QUIT ran.
  CHECK(cluster.shard(0).client().command({"GET", key}).str == "1");
}

TEST_CASE("COMMAND COUNT, COMMAND INFO and an unknown CLIENT subcommand") {
  Cluster cluster(4);
  auto client = cluster.client();
  auto count = client.command({"COMMAND", "COUNT"});
  REQUIRE(count.type == Reply::Type::Integer);
  CHECK(count.integer > 200);

  auto info = client.command({"COMMAND", "INFO", "GET"});
  REQUIRE(info.type == Reply::Type::Array);
  REQUIRE(info.elements.size() == 1);
  REQUIRE(info.elements[0].type == Reply::Type::Array);
  REQUIRE(!info.elements[0].elements.empty());
  CHECK(info.elements[0].elements[0].str == "get");
  CHECK(info.elements[0].elements[1].integer == 2);  // arity
  long long ran = 0;
  for (std::size_t s = 0; s < 4; ++s) ran += cluster.shard(s).command_calls("command|info");
  CHECK(ran == 1);

  auto unknown = client.command({"CLIENT", "FOO"});
  CHECK(unknown.is_error());
  CHECK(unknown.str == "ERR unknown subcommand 'FOO'. Try CLIENT HELP.");
  CHECK(client.command({"PING"}).str == "PONG");
}
