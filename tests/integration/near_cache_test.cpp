// The near cache of hot reads, against real redis-server shards: hits answered by Santral,
// invalidations by Redis's client-side caching (a write made directly on a shard included),
// the byte bound, a shard restarted under a cached key, and the cache off by default.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;
using Clock = std::chrono::steady_clock;

namespace {

// One worker (one cache), every keyed request sampled, a key admitted once read at 1/s.
const std::string kBase =
    "workers: 1\n"
    "timeouts: {connect_ms: 300, request_ms: 400, reconnect_min_ms: 20, reconnect_max_ms: 200}\n"
    "hotkeys: {sample_every: 1, capacity: 1000}\n";
const std::string kCacheOn =
    kBase + "near_cache: {enabled: true, min_reads_per_sec: 1, max_bytes: 64kb}\n";

long long info_field(RedisClient& client, const std::string& name) {
  std::string info = client.command({"INFO", "santral"}).str;
  std::string tag = "\r\n" + name + ":";
  auto at = info.find(tag);
  if (at == std::string::npos) return -1;
  return std::stoll(info.substr(at + tag.size()));
}

// Reads `key` through Santral until it is answered from the cache (it became hot, was admitted
// and filled). The admission list is refreshed on the worker's tick, so this takes a tick or two.
bool wait_cached(RedisClient& client, const std::string& key, const std::string& value) {
  return wait_until(
      [&] {
        if (client.command({"GET", key}).str != value) return false;
        long long hits = info_field(client, "near_cache_hits");
        for (int i = 0; i < 5; ++i) client.command({"GET", key});
        return wait_until([&] { return info_field(client, "near_cache_hits") > hits; }, 300);
      },
      5000);
}

// The id of the shard's tracking connection (Santral's near-cache connection), from CLIENT LIST.
std::string tracking_client_id(RedisClient& direct) {
  std::string clients = direct.command({"CLIENT", "LIST"}).str;
  auto flags = clients.find("flags=t");
  REQUIRE(flags != std::string::npos);
  auto line = clients.rfind('\n', flags);
  auto id = clients.find("id=", line == std::string::npos ? 0 : line + 1) + 3;
  return clients.substr(id, clients.find(' ', id) - id);
}

}  // namespace

TEST_CASE("hot GETs are answered by the near cache: hits rise, the shard sees no more GETs") {
  int admin_port = free_loopback_port();
  Cluster cluster(2, kCacheOn + "admin: {listen: 127.0.0.1:" + std::to_string(admin_port) + "}\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "hot", "v1"}).is_ok());
  RedisServer& shard = cluster.shard(cluster.owner("hot"));
  REQUIRE(wait_cached(client, "hot", "v1"));

  long long gets_before = shard.command_calls("get");
  long long hits_before = info_field(client, "near_cache_hits");
  for (int i = 0; i < 200; ++i) REQUIRE(client.command({"GET", "hot"}).str == "v1");
  // Pipelined hits keep their order among other replies.
  client.append({"GET", "hot"});
  client.append({"PING"});
  client.append({"GET", "hot"});
  CHECK(client.get_reply().str == "v1");
  CHECK(client.get_reply().str == "PONG");
  CHECK(client.get_reply().str == "v1");
  CHECK(shard.command_calls("get") == gets_before);
  CHECK(
      wait_until([&] { return info_field(client, "near_cache_hits") >= hits_before + 202; }, 2000));
  CHECK(info_field(client, "near_cache_keys") == 1);
  CHECK(info_field(client, "near_cache_bytes") > 0);

  auto hotkeys = client.command({"SANTRAL", "HOTKEYS", "COUNT", "1"});
  REQUIRE(hotkeys.elements.size() == 1);
  const auto& entry = hotkeys.elements[0].elements;
  REQUIRE(entry.size() == 16);
  CHECK(entry[1].str == "hot");
  CHECK(entry[12].str == "cached");
  CHECK(entry[13].integer == 1);

  // The admin API shows the same: /hotkeys marks the key cached, /stats has the counters.
  auto page = http_request(admin_port, "GET", "/hotkeys");
  REQUIRE(page.status == 200);
  CHECK(nlohmann::json::parse(page.body)["hotkeys"][0]["cached"] == true);
  auto stats = http_request(admin_port, "GET", "/stats");
  REQUIRE(stats.status == 200);
  auto cache = nlohmann::json::parse(stats.body)["total"]["near_cache"];
  CHECK(cache["hits"].get<long long>() >= 202);
  CHECK(cache["keys"] == 1);
}

TEST_CASE("a write made directly on the shard invalidates a cached hot read within 500 ms") {
  Cluster cluster(2, kCacheOn);
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "hot", "v1"}).is_ok());
  REQUIRE(wait_cached(client, "hot", "v1"));

  auto direct = cluster.shard(cluster.owner("hot")).client();  // bypasses Santral
  REQUIRE(direct.command({"SET", "hot", "v2"}).is_ok());
  auto written = Clock::now();
  REQUIRE(wait_until([&] { return client.command({"GET", "hot"}).str == "v2"; }, 2000));
  auto seen_after = Clock::now() - written;
  CHECK(seen_after < std::chrono::milliseconds(500));
  CHECK(wait_until([&] { return info_field(client, "near_cache_invalidations") >= 1; }, 2000));

  // Cached again with the new value, and a direct DEL is seen as well.
  REQUIRE(wait_cached(client, "hot", "v2"));
  REQUIRE(direct.command({"DEL", "hot"}).integer == 1);
  CHECK(wait_until([&] { return client.command({"GET", "hot"}).is_nil(); }, 500));
}

TEST_CASE("a write through Santral is seen at once, pipelined or not") {
  Cluster cluster(2, kCacheOn);
  auto client = cluster.client();
  auto other = cluster.client();
  REQUIRE(client.command({"SET", "hot", "v1"}).is_ok());
  REQUIRE(wait_cached(client, "hot", "v1"));

  REQUIRE(other.command({"SET", "hot", "v2"}).is_ok());
  CHECK(client.command({"GET", "hot"}).str == "v2");
  CHECK(other.command({"GET", "hot"}).str == "v2");

  REQUIRE(wait_cached(client, "hot", "v2"));
  client.append({"SET", "hot", "v3"});
  client.append({"GET", "hot"});
  client.append({"INCR", "hot:n"});
  client.append({"GET", "hot"});
  CHECK(client.get_reply().is_ok());
  CHECK(client.get_reply().str == "v3");
  CHECK(client.get_reply().integer == 1);
  CHECK(client.get_reply().str == "v3");

  // Inside MULTI nothing is answered from the cache.
  REQUIRE(wait_cached(client, "hot", "v3"));
  REQUIRE(client.command({"MULTI"}).str == "OK");
  REQUIRE(client.command({"SET", "hot", "v4"}).str == "QUEUED");
  REQUIRE(client.command({"GET", "hot"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.elements.size() == 2);
  CHECK(exec.elements[1].str == "v4");
  CHECK(client.command({"GET", "hot"}).str == "v4");
}

TEST_CASE("two workers: a write through one invalidates the other's cache") {
  std::string two_workers = kCacheOn;
  two_workers.replace(two_workers.find("workers: 1"), 10, "workers: 2");
  Cluster cluster(2, two_workers);
  auto first = cluster.client();  // clients are handed to the workers in turn
  auto second = cluster.client();
  REQUIRE(first.command({"SET", "hot", "v1"}).is_ok());
  // INFO's hits add up every worker's, so a hit of one worker could pass for the other's: each
  // client's worker answers from its own cache once the shard sees none of its GETs.
  RedisServer& shard = cluster.shard(cluster.owner("hot"));
  auto from_cache = [&](RedisClient& client) {
    return wait_until(
        [&] {
          long long gets = shard.command_calls("get");
          for (int i = 0; i < 5; ++i)
            if (client.command({"GET", "hot"}).str != "v1") return false;
          return shard.command_calls("get") == gets;
        },
        5000);
  };
  REQUIRE(from_cache(first));
  REQUIRE(from_cache(second));
  CHECK(wait_until([&] { return info_field(first, "near_cache_keys") == 2; }, 2000));

  REQUIRE(first.command({"SET", "hot", "v2"}).is_ok());
  auto written = Clock::now();
  CHECK(first.command({"GET", "hot"}).str == "v2");  // its own worker evicted at once
  REQUIRE(wait_until([&] { return second.command({"GET", "hot"}).str == "v2"; }, 2000));
  CHECK(Clock::now() - written < std::chrono::milliseconds(500));
}

TEST_CASE("a missing hot key is cached as nil, and its creation on the shard is seen") {
  Cluster cluster(1, kCacheOn);
  auto client = cluster.client();
  REQUIRE(wait_cached(client, "absent", ""));  // nil reads as ""
  REQUIRE(client.command({"GET", "absent"}).is_nil());
  CHECK(info_field(client, "near_cache_keys") == 1);

  // Answered from the cache: RESP2 gets `$-1`, a RESP3 client its own nil.
  long long gets_before = cluster.shard(0).command_calls("get");
  RawConnection raw(cluster.santral().port());
  for (int i = 0; i < 10; ++i) {
    raw.send("*2\r\n$3\r\nGET\r\n$6\r\nabsent\r\n");
    CHECK(raw.read_some(5) == "$-1\r\n");
  }
  RawConnection resp3(cluster.santral().port());
  resp3.send(
      "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*2\r\n$3\r\nGET\r\n$6\r\nabsent\r\n"
      "*2\r\n$4\r\nECHO\r\n$3\r\nend\r\n");
  std::string replies;
  for (int i = 0; i < 100 && !replies.ends_with("$3\r\nend\r\n"); ++i)
    replies += resp3.read_some(1);
  CHECK(replies.ends_with("_\r\n$3\r\nend\r\n"));
  CHECK(cluster.shard(0).command_calls("get") == gets_before);

  REQUIRE(cluster.shard(0).client().command({"SET", "absent", "now"}).is_ok());
  CHECK(wait_until([&] { return client.command({"GET", "absent"}).str == "now"; }, 500));
}

TEST_CASE("a cached value expires with its key's TTL, though no read reaches the shard") {
  // Active expiry off: only a read that reaches the shard would expire the key there.
  RedisServer shard({"--enable-debug-command", "yes"});
  REQUIRE(shard.client().command({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}).is_ok());
  SantralProcess santral(SantralProcess::config_for({&shard}, kCacheOn));
  auto client = santral.client();
  REQUIRE(client.command({"SET", "hot", "forever"}).is_ok());
  REQUIRE(wait_cached(client, "hot", "forever"));

  // The write evicts; the next fill reads the TTL along with the value.
  constexpr auto kTtl = std::chrono::milliseconds(1000);
  REQUIRE(client.command({"SET", "hot", "brief", "PX", std::to_string(kTtl.count())}).is_ok());
  auto written = Clock::now();
  REQUIRE(wait_cached(client, "hot", "brief"));
  REQUIRE(Clock::now() - written < kTtl);
  REQUIRE(wait_until([&] { return client.command({"GET", "hot"}).is_nil(); }, 3000));
  CHECK(Clock::now() - written < kTtl + std::chrono::milliseconds(300));
  CHECK(shard.dbsize() == 0);  // the fill's read expired it on the shard
}

TEST_CASE("a shard that refuses CLIENT TRACKING: GETs go the usual way, no client sees an error") {
  RedisServer shard;
  SantralProcess santral(SantralProcess::config_for(
      {&shard},
      "workers: 1\n"
      "timeouts: {connect_ms: 300, request_ms: 5000, reconnect_min_ms: 20, reconnect_max_ms: 200}\n"
      "hotkeys: {sample_every: 1, capacity: 1000}\n"
      "near_cache: {enabled: true, min_reads_per_sec: 1, max_bytes: 64kb}\n"));
  auto client = santral.client();
  auto observer = santral.client();
  REQUIRE(client.command({"SET", "hot", "v"}).is_ok());
  REQUIRE(wait_cached(client, "hot", "v"));

  // The shard stops allowing CLIENT TRACKING and cuts the tracking connection: Santral
  // reconnects at once, and the new handshake waits out a pause before it is refused.
  auto direct = shard.client();
  REQUIRE(direct.command({"ACL", "SETUSER", "default", "-client|tracking"}).is_ok());
  direct.append({"CLIENT", "KILL", "ID", tracking_client_id(direct)});
  direct.append({"CLIENT", "PAUSE", "1500", "ALL"});
  REQUIRE(direct.get_reply().integer == 1);
  REQUIRE(direct.get_reply().is_ok());
  auto paused = Clock::now();
  REQUIRE(wait_until([&] { return info_field(observer, "near_cache_keys") == 0; }, 500));

  // GETs of the hot key while the handshake is unanswered: none may wait on that connection.
  int sent = 0;
  wait_until(
      [&] {
        client.append({"GET", "hot"});
        ++sent;
        return Clock::now() - paused > std::chrono::milliseconds(700);
      },
      1000);
  for (int i = 0; i < sent; ++i) {
    auto reply = client.get_reply();
    INFO(reply.str);
    CHECK(reply.str == "v");
  }
  CHECK(wait_until(
      [&] {
        return santral.log().find(
                   "the near cache and client-side caching need Redis >= 6 and "
                   "permission for CLIENT TRACKING") != std::string::npos;
      },
      2000));
  long long hits = info_field(observer, "near_cache_hits");
  for (int i = 0; i < 20; ++i) REQUIRE(client.command({"GET", "hot"}).str == "v");
  CHECK(info_field(observer, "near_cache_keys") == 0);
  CHECK(info_field(observer, "near_cache_hits") == hits);
}

TEST_CASE("many distinct hot keys stay within max_bytes, evictions counted") {
  Cluster cluster(2, kCacheOn);
  auto client = cluster.client();
  const std::string value(2000, 'x');
  constexpr int kKeys = 100;  // 100 x ~2.1 KB: three times the 64 KB bound
  for (int i = 0; i < kKeys; ++i)
    REQUIRE(client.command({"SET", "big:" + std::to_string(i), value}).is_ok());
  bool evicted = wait_until(
      [&] {
        for (int i = 0; i < kKeys; ++i)
          REQUIRE(client.command({"GET", "big:" + std::to_string(i)}).str == value);
        REQUIRE(info_field(client, "near_cache_bytes") <= 64 * 1024);
        return info_field(client, "near_cache_evictions") > 0;
      },
      5000);
  CHECK(evicted);
  CHECK(info_field(client, "near_cache_bytes") <= 64 * 1024);
  CHECK(info_field(client, "near_cache_keys") > 0);
  CHECK(info_field(client, "near_cache_keys") < kKeys);
}

TEST_CASE("a restarted shard: nothing cached from before is served") {
  Cluster cluster(2, kCacheOn);
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "hot", "before"}).is_ok());
  std::size_t owner = cluster.owner("hot");
  REQUIRE(wait_cached(client, "hot", "before"));

  cluster.shard(owner).kill();
  // Losing the tracking connection drops the shard's entries: the shard's error shows.
  REQUIRE(wait_until([&] { return client.command({"GET", "hot"}).is_error(); }, 2000));
  cluster.shard(owner).restart();  // empty, same port
  Reply reply;
  REQUIRE(wait_until(
      [&] {
        reply = client.command({"GET", "hot"});
        return !reply.is_error();
      },
      5000));
  CHECK(reply.is_nil());

  // Tracking works on the new connection: cached again, and a direct write invalidates. (The
  // GET may have been answered by the tracking connection while the shared one still waits
  // out its reconnect backoff.)
  REQUIRE(wait_until([&] { return client.command({"SET", "hot", "after"}).is_ok(); }, 5000));
  REQUIRE(wait_cached(client, "hot", "after"));
  REQUIRE(cluster.shard(owner).client().command({"SET", "hot", "direct"}).is_ok());
  CHECK(wait_until([&] { return client.command({"GET", "hot"}).str == "direct"; }, 500));
}

TEST_CASE("the near cache is off by default: no hits, no tracking connections") {
  Cluster cluster(1, "workers: 1\nhotkeys: {sample_every: 1}\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "hot", "v"}).is_ok());
  long long gets_before = cluster.shard(0).command_calls("get");
  for (int i = 0; i < 300; ++i) REQUIRE(client.command({"GET", "hot"}).str == "v");
  CHECK(cluster.shard(0).command_calls("get") == gets_before + 300);
  CHECK(info_field(client, "near_cache_hits") == 0);
  CHECK(info_field(client, "near_cache_keys") == 0);
  std::string clients = cluster.shard(0).client().command({"CLIENT", "LIST"}).str;
  CHECK(clients.find("flags=t") == std::string::npos);
}

TEST_CASE("a namespace's near_cache: false keeps its keys out of the cache") {
  Cluster cluster(1, kCacheOn +
                         "namespaces:\n"
                         "  - name: sessions\n"
                         "    match: \"session:{id}\"\n"
                         "    strategy: hashed\n"
                         "    near_cache: false\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "session:1", "s"}).is_ok());
  REQUIRE(client.command({"SET", "post:1", "p"}).is_ok());
  REQUIRE(wait_cached(client, "post:1", "p"));
  long long gets_before = cluster.shard(0).command_calls("get");
  for (int i = 0; i < 100; ++i) REQUIRE(client.command({"GET", "session:1"}).str == "s");
  CHECK(cluster.shard(0).command_calls("get") == gets_before + 100);
  CHECK(info_field(client, "near_cache_keys") == 1);
}

TEST_CASE("a reload empties the cache; turning it off closes the tracking connections") {
  RedisServer shard;
  auto config = [&](const std::string& near_cache) {
    return SantralProcess::config_for({&shard}, kBase + "watch_file: false\n" + near_cache);
  };
  const std::string on = "near_cache: {enabled: true, min_reads_per_sec: 1}\n";
  SantralProcess santral(config(on));
  auto client = santral.client();
  REQUIRE(client.command({"SET", "hot", "v1"}).is_ok());
  REQUIRE(wait_cached(client, "hot", "v1"));

  auto rewrite = [&](const std::string& near_cache) {
    std::ofstream(santral.config_path()) << "listen: 127.0.0.1:" << santral.port() << "\n"
                                         << config(near_cache);
    auto reloaded = client.command({"SANTRAL", "RELOAD"});
    INFO(reloaded.str);
    REQUIRE(reloaded.str.starts_with("OK"));
  };
  rewrite("near_cache: {enabled: false}\n");
  CHECK(wait_until([&] { return info_field(client, "near_cache_keys") == 0; }, 2000));
  auto tracked = [&] {
    return shard.client().command({"CLIENT", "LIST"}).str.find("flags=t") != std::string::npos;
  };
  CHECK(wait_until([&] { return !tracked(); }, 2000));
  long long hits = info_field(client, "near_cache_hits");
  long long gets_before = shard.command_calls("get");
  for (int i = 0; i < 50; ++i) REQUIRE(client.command({"GET", "hot"}).str == "v1");
  CHECK(shard.command_calls("get") == gets_before + 50);
  CHECK(info_field(client, "near_cache_hits") == hits);

  rewrite(on);
  REQUIRE(wait_cached(client, "hot", "v1"));
  CHECK(tracked());
}
