// build_plan for every route kind, on a ShardMap built in memory: no sockets, no shards.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "placement/shard_map.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/hotkeys/salting/salted_route.h"
#include "router/plan/planner.h"
#include "tests/support/config_text.h"

using namespace santral;
using router::Plan;
using router::RouteKind;

namespace {

const std::string kFourShards =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "  - {name: shard2, address: 127.0.0.1:7002}\n"
    "  - {name: shard3, address: 127.0.0.1:7003}\n";

config::Config four_shards(const std::string& extra = "") {
  return test::load_config_text(kFourShards + extra);
}

struct Fixture {
  placement::ShardMap map;
  router::ClientState client;
  bool in_multi = false;
  bool subscribed = false;
  router::SaltTable* salts = nullptr;
  bool cross_shard_writes = false;
  const protocol::LearnedCommands* learned = nullptr;
  bool cluster_endpoint = false;
  router::FleetStanding fleet;
  const router::WriteRefusals* refusals = nullptr;

  explicit Fixture(const std::string& extra = "") : map(four_shards(extra)) {
    client.authenticated = true;
  }

  Plan plan(std::vector<std::string_view> args) {
    Plan plan;
    protocol::Request request{args, {}, false};
    router::build_plan(
        router::PlanContext{map, salts, client, in_multi, subscribed,
                            /*default_database=*/0, cross_shard_writes,
                            /*permissions=*/nullptr, /*move=*/nullptr,
                            /*topology_version=*/0, learned, cluster_endpoint, fleet, refusals},
        request, plan);
    return plan;
  }
  // Two keys that live on different shards.
  std::pair<std::string, std::string> split_keys() const {
    std::string a = "a", b;
    for (int i = 0;; ++i) {
      b = "b" + std::to_string(i);
      if (map.shard_for_key(b) != map.shard_for_key(a)) return {a, b};
    }
  }
};

}  // namespace

TEST_CASE("a keyed command goes whole to its key's shard, the key found once") {
  Fixture f;
  auto plan = f.plan({"SET", "user:{42}:name", "x"});
  CHECK(plan.kind == RouteKind::SingleShard);
  REQUIRE(plan.keys.size() == 1);
  CHECK(plan.keys[0].position == 1);
  CHECK(plan.keys[0].owner.shard == f.map.shard_for_key("42"));
  CHECK(plan.shard == f.map.shard_for_key("42"));
  CHECK(plan.keys[0].owner.ns == nullptr);  // the default placement
}

TEST_CASE("keys on several shards: split for split commands, CROSSSLOT for keyed ones") {
  Fixture f;
  auto [a, b] = f.split_keys();
  auto split = f.plan({"MGET", a, b});
  CHECK(split.kind == RouteKind::Split);
  CHECK_FALSE(split.shard.has_value());
  REQUIRE(split.keys.size() == 2);
  CHECK(split.keys[1].position == 2);

  auto together = f.plan({"MGET", "{t}1", "{t}2"});
  CHECK(together.kind == RouteKind::SingleShard);

  auto cross = f.plan({"RENAME", a, b});
  CHECK(cross.kind == RouteKind::Answered);
  CHECK(cross.error_code == protocol::ClientError::CrossShard);
  CHECK(cross.error.find("'" + a + "' is on shard") != std::string::npos);
}

TEST_CASE("reads Santral can merge are gathered across shards; inside MULTI still CROSSSLOT") {
  Fixture f;
  auto [a, b] = f.split_keys();
  for (std::vector<std::string_view> command :
       std::vector<std::vector<std::string_view>>{{"SUNION", a, b},
                                                  {"SINTERCARD", "2", a, b, "LIMIT", "1"},
                                                  {"ZUNION", "2", a, b, "WITHSCORES"},
                                                  {"PFCOUNT", a, b},
                                                  {"LCS", a, b, "IDX"}}) {
    INFO(command[0]);
    auto gathered = f.plan(command);
    CHECK(gathered.kind == RouteKind::Gathered);
    CHECK_FALSE(gathered.has_error());
    CHECK(gathered.keys.size() == 2);
  }
  CHECK(router::route_kind_name(RouteKind::Gathered) == "SHARD_GATHER");
  CHECK(f.plan({"SUNION", "{t}1", "{t}2"}).kind == RouteKind::SingleShard);
  CHECK(f.plan({"SUNIONSTORE", a, a, b}).error_code == protocol::ClientError::CrossShard);
  f.cross_shard_writes = true;
  CHECK(f.plan({"SUNIONSTORE", a, a, b}).kind == RouteKind::StagedWrite);
  CHECK(f.plan({"RENAME", a, b}).kind == RouteKind::StagedWrite);
  CHECK(f.plan({"RENAME", "{t}1", "{t}2"}).kind == RouteKind::SingleShard);
  CHECK(f.plan({"MSETNX", a, "1", b, "2"}).error_code == protocol::ClientError::CrossShard);
  f.in_multi = true;
  CHECK(f.plan({"SMOVE", a, b, "m"}).error_code == protocol::ClientError::CrossShard);
  auto queued = f.plan({"SUNION", a, b});
  CHECK(queued.kind == RouteKind::Queued);
  CHECK(queued.error_code == protocol::ClientError::CrossShard);
}

TEST_CASE("errors found before routing are answered, in Redis's words") {
  Fixture f;
  auto unknown = f.plan({"NOSUCH", "x"});
  CHECK(unknown.spec == nullptr);
  CHECK(unknown.error.rfind("ERR unknown command 'NOSUCH'", 0) == 0);
  auto arity = f.plan({"GET"});
  CHECK(arity.kind == RouteKind::Answered);
  CHECK(arity.error == "ERR wrong number of arguments for 'get' command");
  auto container = f.plan({"CONFIG"});
  CHECK(container.error_code == protocol::ClientError::WrongArity);
  auto sub = f.plan({"CONFIG", "NOSUCH"});
  CHECK(sub.error_code == protocol::ClientError::UnknownSubcommand);

  f.client.authenticated = false;
  CHECK(f.plan({"GET", "k"}).error_code == protocol::ClientError::NoAuth);
  CHECK(f.plan({"AUTH", "secret"}).kind == RouteKind::Local);

  f.client.authenticated = true;
  f.subscribed = true;
  CHECK(f.plan({"GET", "k"}).error_code == protocol::ClientError::SubscribedMode);
  CHECK(f.plan({"PING"}).kind == RouteKind::Local);
  f.client.protocol = 3;  // RESP3 clients may run anything while subscribed
  CHECK(f.plan({"GET", "k"}).kind == RouteKind::SingleShard);
}

TEST_CASE("broadcast, any, local, refused, pub/sub and channel plans") {
  Fixture f;
  auto dbsize = f.plan({"DBSIZE"});
  CHECK(dbsize.kind == RouteKind::Broadcast);
  CHECK(dbsize.shards == std::vector<std::size_t>{0, 1, 2, 3});
  auto keys = f.plan({"KEYS", "{tag}*"});
  CHECK(keys.kind == RouteKind::Broadcast);
  CHECK(keys.shards == std::vector<std::size_t>{f.map.shard_for_key("tag")});
  auto scan = f.plan({"SCAN", "0", "MATCH", "{tag}:*"});
  CHECK(scan.shards == std::vector<std::size_t>{f.map.shard_for_key("tag")});
  CHECK(f.plan({"RANDOMKEY"}).kind == RouteKind::Broadcast);
  CHECK(f.plan({"COMMAND", "INFO", "get"}).kind == RouteKind::AnyShard);
  CHECK(f.plan({"PING"}).kind == RouteKind::Local);
  auto refused = f.plan({"ASKING"});
  CHECK(refused.kind == RouteKind::Refused);
  CHECK(refused.error.starts_with("ERR This instance has cluster support disabled"));
  CHECK(f.plan({"SUBSCRIBE", "news"}).kind == RouteKind::Subscription);
  auto publish = f.plan({"PUBLISH", "news", "hello"});
  CHECK(publish.kind == RouteKind::SingleShard);
  CHECK(publish.shard == f.map.shard_for_key("news"));
}

TEST_CASE("blocking commands: on one shard, XREAD only with BLOCK, WAIT on every shard") {
  Fixture f;
  auto blpop = f.plan({"BLPOP", "{q}a", "{q}b", "0"});
  CHECK(blpop.kind == RouteKind::Blocking);
  CHECK(blpop.shard == f.map.shard_for_key("q"));
  auto [a, b] = f.split_keys();
  auto cross = f.plan({"BLPOP", a, b, "0"});
  CHECK(cross.kind == RouteKind::Blocking);
  CHECK(cross.error_code == protocol::ClientError::CrossShard);
  CHECK(f.plan({"XREAD", "STREAMS", "s", "0"}).kind == RouteKind::SingleShard);
  auto xread = f.plan({"XREAD", "BLOCK", "100", "STREAMS", "s", "0"});
  CHECK(xread.kind == RouteKind::Blocking);
  CHECK(xread.blocks);
  auto wait = f.plan({"WAIT", "1", "0"});
  CHECK(wait.kind == RouteKind::Blocking);
  CHECK(wait.keys.empty());
}

TEST_CASE("inside MULTI: queued on the keys' shard, any shard, or refused with the reason") {
  Fixture f;
  f.in_multi = true;
  auto set = f.plan({"SET", "k", "v"});
  CHECK(set.kind == RouteKind::Queued);
  CHECK(set.shard == f.map.shard_for_key("k"));
  CHECK_FALSE(set.has_error());
  auto any = f.plan({"COMMAND", "COUNT"});  // local: cannot be queued
  CHECK(any.kind == RouteKind::Queued);
  CHECK(any.error_code == protocol::ClientError::NotInTransaction);
  CHECK(f.plan({"COMMAND", "INFO", "get"}).any_shard);
  auto [a, b] = f.split_keys();
  CHECK(f.plan({"MSET", a, "1", b, "2"}).error_code == protocol::ClientError::CrossShard);
  CHECK(f.plan({"DBSIZE"}).error_code == protocol::ClientError::NotInTransaction);
  CHECK(f.plan({"EXEC"}).kind == RouteKind::Transaction);
  CHECK(f.plan({"DISCARD"}).kind == RouteKind::Transaction);
  // The channel of a PUBLISH is its key: an EVAL's keys before it do not leak into its plan.
  auto eval = f.plan({"EVAL", "return 1", "1", "k"});
  REQUIRE(eval.keys.size() == 1);
  auto publish = f.plan({"PUBLISH", "news", "m"});
  REQUIRE(publish.keys.size() == 1);
  CHECK(publish.keys[0].position == 1);
}

TEST_CASE("a salted counter's plan carries its layout; unsupported commands are refused") {
  const std::string salting = "salting:\n  - {match: \"likes:{id}\", salts: 4}\n";
  Fixture f(salting);
  auto shared_config = std::make_shared<const config::Config>(four_shards(salting));
  auto map = std::make_shared<const placement::ShardMap>(*shared_config);
  router::SaltTable salts;
  salts.rebuild(shared_config, map, nullptr, std::make_shared<const router::SaltOverrides>());
  f.salts = &salts;

  auto get = f.plan({"GET", "likes:7"});
  CHECK(get.kind == RouteKind::Salted);
  REQUIRE(get.keys.size() == 1);
  REQUIRE(get.keys[0].salted != nullptr);
  CHECK(get.keys[0].salted->salts == 4);
  CHECK(get.keys[0].salted->sub_keys.size() == 4);
  CHECK(f.plan({"GET", "views:7"}).kind == RouteKind::SingleShard);
  auto append = f.plan({"APPEND", "likes:7", "x"});
  CHECK(append.kind == RouteKind::Answered);
  CHECK(append.error_code == protocol::ClientError::SaltedCommand);
  f.in_multi = true;
  CHECK(f.plan({"INCR", "likes:7"}).error_code == protocol::ClientError::SaltedInTransaction);
}

TEST_CASE("what a salted counter does with a command is the command table's salted= column") {
  auto spec = [](std::string_view name) { return *protocol::find_command(name); };
  CHECK(router::salted_effect(spec("incrby")) == "goes to one sub-key chosen at random");
  CHECK(router::salted_effect(spec("get")) == "reads every sub-key and adds the values up");
  CHECK(router::salted_effect(spec("append")) == "not supported");
  // A key sampled with counter commands only may be salted automatically; SET and the hash
  // commands do not count.
  CHECK(router::counter_command(spec("incr")));
  CHECK(router::counter_command(spec("mget")));
  CHECK_FALSE(router::counter_command(spec("set")));
  CHECK_FALSE(router::counter_command(spec("hincrby")));
  CHECK_FALSE(router::counter_command(spec("lpush")));
}

TEST_CASE("near cache and read_from come from the key's namespace, matched once") {
  Fixture f(
      "near_cache: {enabled: true}\n"
      "namespaces:\n"
      "  - {name: sessions, match: \"session:{id}\", strategy: hashed, near_cache: false,\n"
      "     read_from: prefer-replica}\n");
  auto cached = f.plan({"GET", "post:1"});
  CHECK(cached.kind == RouteKind::NearCache);
  CHECK(cached.near_cached);
  auto session = f.plan({"GET", "session:1"});
  CHECK(session.kind == RouteKind::SingleShard);
  REQUIRE(session.keys.size() == 1);
  REQUIRE(session.keys[0].owner.ns != nullptr);
  CHECK(session.keys[0].owner.ns->name() == "sessions");
  CHECK(session.read_from == config::ReadFrom::PreferReplica);
  CHECK_FALSE(f.plan({"SET", "session:1", "v"}).read_from.has_value());  // writes: the primary
  f.client.database = 1;
  CHECK(f.plan({"GET", "post:1"}).kind == RouteKind::SingleShard);
}

TEST_CASE("the plan says which connection carries the request: primary, read_from or lane") {
  Fixture f(
      "namespaces:\n"
      "  - {name: sessions, match: \"session:{id}\", strategy: hashed, read_from: replica}\n");
  using router::ConnectionKind;
  CHECK(f.plan({"SET", "session:1", "v"}).connection == ConnectionKind::Primary);
  CHECK(f.plan({"GET", "session:1"}).connection == ConnectionKind::ReadFrom);
  CHECK(f.plan({"GET", "session:1"}).read_from == config::ReadFrom::Replica);
  auto [a, b] = f.split_keys();
  CHECK(f.plan({"MGET", a, b}).connection == ConnectionKind::ReadFrom);  // the config's read_from
  CHECK_FALSE(f.plan({"MGET", a, b}).read_from.has_value());
  // A tracking client's reads and writes take its lane: its invalidations come in order.
  f.client.tracking.on = true;
  CHECK(f.plan({"GET", "session:1"}).connection == ConnectionKind::TrackingLane);
  CHECK(f.plan({"SET", "session:1", "v"}).connection == ConnectionKind::TrackingLane);
}

TEST_CASE("the cluster endpoint: CLUSTER SLOTS and ASKING answered only when it is on") {
  Fixture f;
  CHECK(f.plan({"CLUSTER", "SLOTS"}).kind == RouteKind::Refused);
  CHECK(f.plan({"CLUSTER", "SLOTS"}).error_code == protocol::ClientError::ClusterSupportDisabled);
  f.cluster_endpoint = true;
  CHECK(f.plan({"CLUSTER", "SLOTS"}).kind == RouteKind::Local);
  CHECK(f.plan({"CLUSTER", "MYSHARDID"}).kind == RouteKind::Local);
  CHECK(f.plan({"ASKING"}).kind == RouteKind::Local);
  CHECK(f.plan({"READONLY"}).kind == RouteKind::Local);
  // What no Santral takes: slots and nodes follow the fleet.
  auto addslots = f.plan({"CLUSTER", "ADDSLOTS", "1"});
  CHECK(addslots.kind == RouteKind::Refused);
  CHECK(addslots.error.find("cluster_endpoint") != std::string::npos);
}

TEST_CASE("learned commands are planned by the built-in rules: keyed, CROSSSLOT, any, refused") {
  protocol::CommandArchive archive;
  protocol::CommandArchive::Sources sources;
  auto keyed = [](std::string name, std::uint32_t flags, std::int16_t lastkey) {
    protocol::CommandShape shape;
    shape.name = std::move(name);
    shape.arity = -2;
    shape.flags = flags;
    protocol::KeySpec key;
    key.begin = protocol::KeySpec::Begin::Index;
    key.index = 1;
    key.find = protocol::KeySpec::Find::Range;
    key.lastkey = lastkey;
    key.keystep = 1;
    key.flags = protocol::KeySpec::kRW | protocol::KeySpec::kUpdate;
    shape.key_specs.push_back({key, ""});
    return shape;
  };
  protocol::CommandShape keyless;
  keyless.name = "mymod.version";
  keyless.flags = protocol::kReadonly;
  protocol::CommandShape admin = keyless;
  admin.name = "mymod.reset";
  admin.flags = protocol::kAdmin;
  sources.shards = {{keyed("hexpire", protocol::kWrite, 0),
                     keyed("mymod.mdel", protocol::kWrite, -1), keyless, admin}};
  sources.every_shard_answered = true;
  sources.lowest_version = "7.4.2";
  auto learned = archive.build(sources);
  Fixture f;
  f.learned = learned.get();
  auto one = f.plan({"HEXPIRE", "user:{42}", "10", "FIELDS", "1", "a"});
  CHECK(one.kind == RouteKind::SingleShard);
  CHECK(one.shard == f.map.shard_for_key("42"));
  CHECK(one.spec->origin == protocol::CommandOrigin::Shards);
  auto [a, b] = f.split_keys();
  auto across = f.plan({"mymod.mdel", a, b});
  CHECK(across.kind == RouteKind::Answered);
  CHECK(across.error_code == protocol::ClientError::CrossShard);
  CHECK(f.plan({"mymod.mdel", "{t}a", "{t}b"}).kind == RouteKind::SingleShard);
  CHECK(f.plan({"MYMOD.VERSION"}).kind == RouteKind::AnyShard);
  auto refused = f.plan({"mymod.reset"});
  CHECK(refused.kind == RouteKind::Refused);
  CHECK(refused.error.find("each shard directly") != std::string::npos);
  CHECK(f.plan({"nosuch"}).error_code == protocol::ClientError::UnknownCommand);
  f.learned = nullptr;
  CHECK(f.plan({"HEXPIRE", "k", "10"}).error_code == protocol::ClientError::UnknownCommand);
}

TEST_CASE("a fleet router out of touch plans nothing that reaches a shard") {
  Fixture f;
  f.fleet.late_ns = 1'500'000'000;
  auto get = f.plan({"GET", "k"});
  CHECK(get.kind == RouteKind::Answered);
  CHECK(get.error_code == protocol::ClientError::FleetOutOfTouch);
  CHECK(get.error.find("(1500 ms late)") != std::string::npos);
  CHECK(get.pulls.empty());
  // Santral's own answers and the client's own errors are given as they were.
  CHECK(f.plan({"PING"}).kind == RouteKind::Local);
  CHECK(f.plan({"GET"}).error_code == protocol::ClientError::WrongArity);

  f.fleet.map_refused = 42;
  auto set = f.plan({"SET", "k", "v"});
  CHECK(set.error_code == protocol::ClientError::FleetMapRefused);
  CHECK(set.error.find("map version 42") != std::string::npos);

  f.fleet = {};  // in touch again
  CHECK(f.plan({"GET", "k"}).kind == RouteKind::SingleShard);
}

TEST_CASE("after a failover that lost writes, writes to that shard are refused and reads are not") {
  Fixture f;
  auto [key, elsewhere] = f.split_keys();
  std::string shard = f.map.shard(f.map.shard_for_key(key)).name;
  router::WriteRefusals refusals{
      {{shard, "127.0.0.1:7000", "127.0.0.1:7100", "it never synced with 127.0.0.1:7000 (...)"}}};
  f.refusals = &refusals;

  auto set = f.plan({"SET", key, "v"});
  CHECK(set.kind == RouteKind::Answered);
  CHECK(set.error_code == protocol::ClientError::LostWritesRefused);
  INFO(set.error);
  CHECK(set.error.starts_with("ERR santral: shard '" + shard + "' refuses writes: Sentinel " +
                              "promoted 127.0.0.1:7100 in place of 127.0.0.1:7000, and it never " +
                              "synced with 127.0.0.1:7000 (...)"));
  CHECK(set.error.find("reads are still served") != std::string::npos);
  CHECK(set.error.find("SANTRAL FAILOVER ACCEPT " + shard + " lets writes go") !=
        std::string::npos);
  // Reads, and writes to the other shards, go on.
  CHECK(f.plan({"GET", key}).kind == RouteKind::SingleShard);
  CHECK(f.plan({"SET", elsewhere, "v"}).kind == RouteKind::SingleShard);
  // Whatever may write there: a split write with one key there, a script, a broadcast write.
  CHECK(f.plan({"MSET", elsewhere, "1", key, "2"}).error_code ==
        protocol::ClientError::LostWritesRefused);
  CHECK(f.plan({"MGET", elsewhere, key}).kind == RouteKind::Split);
  CHECK(f.plan({"EVAL", "return 1", "1", key}).error_code ==
        protocol::ClientError::LostWritesRefused);
  CHECK(f.plan({"EVAL_RO", "return 1", "1", key}).kind == RouteKind::SingleShard);
  CHECK(f.plan({"FLUSHALL"}).error_code == protocol::ClientError::LostWritesRefused);
  // Inside MULTI it fails to queue (EXEC then answers EXECABORT).
  f.in_multi = true;
  CHECK(f.plan({"INCR", key}).error_code == protocol::ClientError::LostWritesRefused);
  f.in_multi = false;

  f.refusals = nullptr;  // SANTRAL FAILOVER ACCEPT
  CHECK(f.plan({"SET", key, "v"}).kind == RouteKind::SingleShard);
}
