// What a new shard connection says first (router/backend/shard_handshake.h): the commands for
// each login, profile and role, and the requests held back until every one has answered.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config.h"
#include "router/backend/shard_handshake.h"

using namespace santral::router;
namespace config = santral::config;

namespace {

std::string resp(const std::vector<std::string>& words) {
  std::string out = "*" + std::to_string(words.size()) + "\r\n";
  for (const auto& word : words) out += "$" + std::to_string(word.size()) + "\r\n" + word + "\r\n";
  return out;
}

const std::string kGet = resp({"GET", "k"});

}  // namespace

TEST_CASE("shard handshake: HELLO 3 with AUTH, tracking and SELECT, in that order") {
  config::BackendOptions backend;
  backend.username = "router";
  backend.password = "secret";
  ShardHandshake handshake;
  std::string outbox = kGet;  // queued while the connection connected
  auto owners = handshake.begin({backend, {5, 3}, ConnectionRole::TrackingBroadcast, true}, outbox);
  CHECK(owners == std::vector<ReplyOwner>(3, ReplyOwner::Handshake));
  CHECK(outbox == resp({"HELLO", "3", "AUTH", "router", "secret"}) +
                      resp({"CLIENT", "TRACKING", "ON", "BCAST"}) + resp({"SELECT", "5"}));
  CHECK(handshake.answering());
  CHECK(&handshake.queue(outbox) != &outbox);  // requests now are held too
}

TEST_CASE("shard handshake: AUTH as the default user, CLIENT ID asked by all but the prover") {
  config::BackendOptions backend;
  backend.password = "secret";
  ShardHandshake handshake;
  std::string outbox;
  auto owners = handshake.begin({backend, {}, ConnectionRole::Shared, false}, outbox);
  CHECK(owners == std::vector<ReplyOwner>{ReplyOwner::Handshake, ReplyOwner::ClientId});
  CHECK(outbox == resp({"AUTH", "default", "secret"}) + resp({"CLIENT", "ID"}));
}

TEST_CASE("shard handshake: requests are held until every command has answered") {
  config::BackendOptions backend;
  backend.password = "secret";
  ShardHandshake handshake;
  std::string outbox;
  handshake.begin({backend, {}, ConnectionRole::Shared, false}, outbox);
  outbox.clear();  // written to the socket
  handshake.queue(outbox).append(kGet);
  CHECK(outbox.empty());
  CHECK_FALSE(handshake.answered(outbox));  // AUTH's +OK
  CHECK(outbox.empty());
  CHECK(handshake.client_id_answered(":42\r\n", false, "s0", "127.0.0.1:7000", outbox));
  CHECK(outbox == kGet);
  CHECK(handshake.server_client_id() == 42);
  CHECK_FALSE(handshake.answering());
  CHECK(&handshake.queue(outbox) == &outbox);
}

TEST_CASE("shard handshake: nothing to say, nothing held; a refused CLIENT ID leaves id 0") {
  config::BackendOptions backend;
  ShardHandshake handshake;
  std::string outbox = kGet;
  CHECK(handshake.begin({backend, {}, ConnectionRole::Shared, true}, outbox).empty());
  CHECK(outbox == kGet);
  CHECK_FALSE(handshake.answering());
  std::string later;
  handshake.begin({backend, {}, ConnectionRole::Shared, false}, later);
  CHECK(handshake.client_id_answered("-NOPERM no\r\n", true, "s0", "127.0.0.1:7000", later));
  CHECK(handshake.server_client_id() == 0);
}

TEST_CASE("shard handshake: a refusal says what to check") {
  auto why = ShardHandshake::refusal("-WRONGPASS invalid password\r\n", false, true, "s0", "a:1");
  CHECK(why ==
        "handshake failed: WRONGPASS invalid password (check backend.password / "
        "backend.database)");
  CHECK(ShardHandshake::refusal("-ERR unknown\r\n", true, true, "s0", "a:1")
            .find("near_cache.enabled: false") != std::string::npos);
}
