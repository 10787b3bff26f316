// Limits per user (users[].limits): a user over its requests_per_s, max_pipeline or
// max_connections is refused with an error that names the limit, counted in INFO, while a
// user without limits is served as before.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"

using namespace santral::test;

namespace {

const std::string kUsers =
    "users:\n"
    "  - name: ops\n"
    "    password: ops-pw\n"
    "  - name: rated\n"
    "    password: rated-pw\n"
    "    limits: {requests_per_s: 5}\n"
    "  - name: piped\n"
    "    password: piped-pw\n"
    "    limits: {max_pipeline: 2}\n"
    "  - name: few\n"
    "    password: few-pw\n"
    "    limits: {max_connections: 2}\n"
    "  - name: patient\n"
    "    password: patient-pw\n"
    "    limits: {requests_per_s: 20, burst: 1, wait_ms: 5000}\n"
    "  - name: hasty\n"
    "    password: hasty-pw\n"
    "    limits: {requests_per_s: 2, burst: 1, wait_ms: 100}\n";

RedisClient logged_in(Cluster& cluster, const std::string& user) {
  return cluster.client_as(user, user + "-pw");
}

// The replies of `count` GETs of `key` sent in one write.
std::vector<Reply> pipelined_gets(RedisClient& client, const std::string& key, int count) {
  for (int i = 0; i < count; ++i) client.append({"GET", key});
  std::vector<Reply> replies;
  for (int i = 0; i < count; ++i) replies.push_back(client.get_reply());
  return replies;
}

std::string info_line(RedisClient& client, const std::string& key) {
  auto info = client.command({"INFO", "santral"}).str;
  auto at = info.find(key + ":");
  if (at == std::string::npos) return "";
  return info.substr(at, info.find("\r\n", at) - at);
}

}  // namespace

TEST_CASE("limits.requests_per_s: a user over its rate is refused, another user is not") {
  int admin_port = free_loopback_port();
  Cluster cluster(2, kUsers + "admin: {listen: 127.0.0.1:" + std::to_string(admin_port) + "}\n",
                  {"--workers", "2"});
  auto rated = logged_in(cluster, "rated");
  auto ops = logged_in(cluster, "ops");
  REQUIRE(ops.command({"SET", "k", "v"}).is_ok());

  // 100 requests in one write: a bucket of 5 tokens refilled at 5 a second cannot pass them
  // all unless reading them took Santral 19 s.
  auto replies = pipelined_gets(rated, "k", 100);
  int served = 0, refused = 0;
  for (const auto& reply : replies) {
    if (reply.is_error()) {
      ++refused;
      INFO(reply.str);
      CHECK(reply.str.find("user 'rated' is over its limits.requests_per_s of 5") !=
            std::string::npos);
    } else {
      ++served;
      CHECK(reply.str == "v");
    }
  }
  CHECK(served >= 5);
  CHECK(refused > 0);

  // The same at once from a user without limits: every one served.
  for (const auto& reply : pipelined_gets(ops, "k", 100)) CHECK(reply.str == "v");

  auto line = info_line(ops, "user_limits_rated");
  INFO(line);
  CHECK(line.find("requests_per_s=5,burst=5,") != std::string::npos);
  CHECK(line.find("refused_requests=" + std::to_string(refused)) != std::string::npos);
  CHECK(info_line(ops, "user_limits_ops").empty());  // no limits, nothing refused

  // The same on /metrics.
  auto metrics = http_request(admin_port, "GET", "/metrics").body;
  CHECK(metrics.find("santral_user_refused_total{user=\"rated\",limit=\"requests_per_s\"} " +
                     std::to_string(refused) + "\n") != std::string::npos);
  CHECK(metrics.find("santral_user_connections{user=\"rated\"} 1\n") != std::string::npos);
  CHECK(metrics.find("user=\"ops\"") == std::string::npos);
}

TEST_CASE("limits.wait_ms: a request over the rate waits for its token in turn, and runs") {
  int admin_port = free_loopback_port();
  Cluster cluster(2, kUsers + "admin: {listen: 127.0.0.1:" + std::to_string(admin_port) + "}\n");
  auto patient = logged_in(cluster, "patient");
  auto ops = logged_in(cluster, "ops");

  // Ten INCRs in one write, with one token and 20 more a second: the first runs at once, each
  // other one waits for its token (50 ms after the one before) instead of being refused.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) patient.append({"INCR", "patient:counter"});
  for (int i = 1; i <= 10; ++i) {
    auto reply = patient.get_reply();
    INFO(reply.str);
    CHECK(reply.integer == i);  // in order, none refused
  }
  // Nine tokens came at 20 a second: held at least 450 ms in all (a loaded machine only adds).
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(450));
  CHECK(ops.command({"GET", "patient:counter"}).str == "10");
  auto line = info_line(ops, "user_limits_patient");
  INFO(line);
  CHECK(line.find("refused_requests=0,") != std::string::npos);
  // How many waited depends on how the ten arrive: one read holds nine, but a loaded machine can
  // deliver them in parts, and a request read after its token came runs without waiting. At
  // least one waited (without wait_ms it would have been refused), at most nine.
  auto held_at = line.find("wait_ms=5000,held_requests=");
  REQUIRE(held_at != std::string::npos);
  int held = std::stoi(line.substr(held_at + std::string("wait_ms=5000,held_requests=").size()));
  CHECK(held >= 1);
  CHECK(held <= 9);
  auto metrics = http_request(admin_port, "GET", "/metrics").body;
  CHECK(metrics.find("santral_user_held_total{user=\"patient\"} " + std::to_string(held) + "\n") !=
        std::string::npos);
}

TEST_CASE(
    "limits.wait_ms: past it a request is refused and the connection is not read for wait_ms, "
    "then longer") {
  Cluster cluster(2, kUsers);
  auto hasty = logged_in(cluster, "hasty");
  auto ops = logged_in(cluster, "ops");
  REQUIRE(ops.command({"SET", "k", "v"}).is_ok());

  // One token and one more every 500 ms, waits of at most 100 ms: of five GETs in one write
  // the first runs, and the next token is too far off for the others.
  auto start = std::chrono::steady_clock::now();
  auto replies = pipelined_gets(hasty, "k", 5);
  auto took = std::chrono::steady_clock::now() - start;
  int refused = 0;
  for (const auto& reply : replies) {
    if (!reply.is_error()) continue;
    ++refused;
    INFO(reply.str);
    CHECK(reply.str.find("user 'hasty' is over its limits.requests_per_s of 2") !=
          std::string::npos);
  }
  CHECK(replies.front().str == "v");
  CHECK(refused >= 2);  // one more may have found a token if reading them took 500 ms
  // After each refusal the next request was read later, not at once: wait_ms after the first
  // refusal in a row, twice that after the second, and so on (run, refused, refused, refused,
  // run: at least 100 + 200 + 400 ms). A client that retries at once is read less and less
  // often, not at its own speed.
  auto least = std::chrono::milliseconds(0);
  auto pause = std::chrono::milliseconds(100);
  for (std::size_t i = 0; i + 1 < replies.size(); ++i) {
    if (!replies[i].is_error()) {
      pause = std::chrono::milliseconds(100);
      continue;
    }
    least += pause;
    pause *= 2;
  }
  CHECK(took >= least);
  CHECK(info_line(ops, "user_limits_hasty").find("refused_requests=" + std::to_string(refused)) !=
        std::string::npos);
}

TEST_CASE("limits.max_pipeline: requests past it on one connection are refused, not run") {
  Cluster cluster(1, kUsers + "timeouts: {request_ms: 60000}\n");
  auto ops = logged_in(cluster, "ops");
  // A raw connection, so that the requests are sent at once without reading a reply.
  RawConnection piped(cluster.santral().port());
  piped.send("*3\r\n$4\r\nAUTH\r\n$5\r\npiped\r\n$8\r\npiped-pw\r\n");
  REQUIRE(piped.read_until("\r\n") == "+OK\r\n");

  // The shard answers nothing while stopped: the first two stay owed when the others come.
  cluster.shard(0).pause();
  std::string incr = "*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n";
  piped.send(incr + incr + incr + incr);
  // Santral has read them once INFO counts the refusals.
  REQUIRE(wait_until(
      [&] {
        return info_line(ops, "user_limits_piped").find("refused_pipeline=2") != std::string::npos;
      },
      10000));
  cluster.shard(0).resume();
  std::string replies;
  auto lines = [&] {
    std::size_t count = 0;
    for (auto at = replies.find("\r\n"); at != std::string::npos; at = replies.find("\r\n", at + 2))
      ++count;
    return count;
  };
  while (lines() < 4) {
    auto more = piped.read_until("\r\n", 10000);
    REQUIRE_FALSE(more.empty());
    replies += more;
  }
  INFO(replies);
  CHECK(replies.starts_with(":1\r\n:2\r\n-ERR santral: user 'piped' may have 2 requests"));
  auto second_error = replies.find("-ERR", replies.find("-ERR") + 1);
  CHECK(second_error != std::string::npos);
  CHECK(replies.find("limits.max_pipeline", second_error) != std::string::npos);
  // Refused requests did not run.
  CHECK(ops.command({"GET", "counter"}).str == "2");
  // With its replies read, the connection is served again.
  piped.send(incr);
  CHECK(piped.read_until("\r\n") == ":3\r\n");
}

TEST_CASE("limits.max_connections: a login past it is refused until a connection goes") {
  Cluster cluster(1, kUsers);
  auto first = logged_in(cluster, "few");
  auto second = logged_in(cluster, "few");
  auto third = cluster.client();
  auto refused = third.command({"AUTH", "few", "few-pw"});
  INFO(refused.str);
  CHECK(refused.str.find("user 'few' already has 2 connections") != std::string::npos);
  CHECK(refused.str.find("limits.max_connections") != std::string::npos);
  // Not logged in: it is still the default user, which may not run commands here.
  CHECK(third.command({"GET", "k"}).is_error());
  // Other users log in as before.
  auto ops = logged_in(cluster, "ops");
  CHECK(info_line(ops, "user_limits_few").find("connections=2,") != std::string::npos);

  // One connection goes (or logs in as someone else): the next login is accepted.
  REQUIRE(second.command({"AUTH", "ops", "ops-pw"}).is_ok());
  CHECK(third.command({"AUTH", "few", "few-pw"}).is_ok());
  first = RedisClient(cluster.santral().port());  // the first one closes
  auto fourth = cluster.client();
  CHECK(wait_until([&] { return fourth.command({"AUTH", "few", "few-pw"}).is_ok(); }, 10000));
  CHECK(info_line(ops, "user_limits_few").find("refused_connections=") != std::string::npos);
}

TEST_CASE("namespaces[].limits: requests on a limited namespace's keys are refused, others not") {
  int admin_port = free_loopback_port();
  Cluster cluster(2,
                  "namespaces:\n"
                  "  - name: batch\n"
                  "    match: 'batch:{id}'\n"
                  "    strategy: hashed\n"
                  "    limits: {requests_per_s: 5}\n"
                  "  - name: web\n"
                  "    match: 'web:{id}'\n"
                  "    strategy: hashed\n"
                  "admin: {listen: 127.0.0.1:" +
                      std::to_string(admin_port) + "}\n",
                  {"--workers", "2"});
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "web:page", "w"}).is_ok());
  auto other = cluster.client();

  // 100 GETs of one batch key in one write: at most the bucket's 5 (and what 5 a second adds
  // while they are read) are served; the rest are refused and not run.
  int served = 0, refused = 0;
  for (const auto& reply : pipelined_gets(client, "batch:job", 100)) {
    if (reply.is_error()) {
      ++refused;
      INFO(reply.str);
      CHECK(reply.str.find("namespace 'batch' is over its limits.requests_per_s of 5") !=
            std::string::npos);
    } else {
      ++served;
    }
  }
  CHECK(served >= 5);
  CHECK(refused > 0);
  // A refused write did not run: INCRs past the bucket leave fewer increments than sent.
  int acknowledged = 0;
  for (const auto& reply : pipelined_gets(other, "web:page", 100)) CHECK(reply.str == "w");
  for (int i = 0; i < 50; ++i) other.append({"INCR", "batch:counter"});
  for (int i = 0; i < 50; ++i)
    if (!other.get_reply().is_error()) ++acknowledged;
  // What landed, read on the shards themselves (a GET through Santral would take a token).
  long long value = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    auto stored = cluster.shard(s).client().command({"GET", "batch:counter"});
    if (!stored.is_nil()) value += std::stoll(stored.str);
  }
  CHECK(value == acknowledged);
  CHECK(acknowledged < 50);

  auto line = info_line(client, "namespace_limits_batch");
  INFO(line);
  CHECK(line.find("requests_per_s=5,burst=5,") != std::string::npos);
  CHECK(info_line(client, "namespace_limits_web").empty());
  auto metrics = http_request(admin_port, "GET", "/metrics").body;
  CHECK(metrics.find(
            "santral_namespace_refused_total{namespace=\"batch\",limit=\"requests_per_s\"}") !=
        std::string::npos);
}
