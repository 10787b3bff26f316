#include <catch2/catch.hpp>

#include "router/cluster/map_document.h"
#include "router/cluster/move_document.h"

using namespace santral::router;

namespace {
constexpr const char* kKey = "/santral/prod/map";
constexpr const char* kShards = "shards:\n  - name: a\n    address: 127.0.0.1:7001\n";
}  // namespace

TEST_CASE("a map document round-trips with its format version and who pushed it") {
  auto text = encode_map({kShards, "router-a"});
  CHECK(text.find("\"format\": 1") != std::string::npos);
  auto decoded = decode_map(kKey, text);
  REQUIRE(decoded.shared);
  CHECK(decoded.error.empty());
  CHECK(decoded.pushed_by == "router-a");
  CHECK(decoded.config_text == kShards);
  REQUIRE(decoded.shared->shards.size() == 1);
  CHECK(decoded.shared->shards[0].address.port == 7001);
}

TEST_CASE("a map document that does not validate names the etcd key and the field") {
  SECTION("not JSON") {
    auto decoded = decode_map(kKey, "shards: [");
    CHECK_FALSE(decoded.shared);
    CHECK(decoded.error.find("etcd key /santral/prod/map: not a Santral map document") == 0);
  }
  SECTION("no format") {
    auto decoded = decode_map(kKey, R"({"config": "x"})");
    CHECK(decoded.error.find("etcd key /santral/prod/map: field format:") == 0);
  }
  SECTION("a newer format") {
    auto decoded = decode_map(kKey, R"({"format": 7, "santral": "9.1", "config": "x"})");
    CHECK(decoded.error.find("field format: 7 is from a newer Santral (9.1)") != std::string::npos);
  }
  SECTION("an older format") {
    auto decoded = decode_map(kKey, R"({"format": 0, "config": "x"})");
    CHECK(decoded.error.find("field format: 0 is from an older Santral") != std::string::npos);
  }
  SECTION("no config") {
    auto decoded = decode_map(kKey, R"({"format": 1})");
    CHECK(decoded.error.find("field config: missing") != std::string::npos);
  }
  SECTION("a config that does not validate: the line and the key in it") {
    auto decoded = decode_map(
        kKey, R"({"format": 1, "config": "shards:\n  - name: a\n    address: nowhere\n"})");
    CHECK_FALSE(decoded.shared);
    CHECK(decoded.error.find("etcd key /santral/prod/map field config:3: shards[0].address") == 0);
  }
}

TEST_CASE("a map document carries the map salted counters are named by, and its lineage") {
  std::string naming = "shards:\n  - name: old\n    address: 127.0.0.1:7009\n";
  auto decoded = decode_map(kKey, encode_map({kShards, "router-a", 5, 5, naming}));
  REQUIRE(decoded.shared);
  CHECK(decoded.moved_from == 5);
  CHECK(decoded.based_on == 5);
  CHECK(decoded.salt_naming == naming);
  CHECK(decode_map(kKey, encode_map({kShards, "router-a"})).salt_naming.empty());
  SECTION("not a string") {
    auto bad = decode_map(kKey, R"({"format": 1, "config": "shards: []", "salt_naming": 3})");
    CHECK_FALSE(bad.shared);
    CHECK(bad.error.find("etcd key /santral/prod/map: field salt_naming: not a string") == 0);
  }
  SECTION("a map that does not validate") {
    auto bad = decode_map(kKey, encode_map({kShards, "router-a", 5, 5,
                                            "shards:\n  - name: a\n    address: nowhere\n"}));
    CHECK_FALSE(bad.shared);
    CHECK(bad.error.find("etcd key /santral/prod/map field salt_naming") != std::string::npos);
  }
}

TEST_CASE("a move document round-trips; a bad one is refused with its field") {
  MoveDocument move;
  move.phase = MoveDocument::Phase::Aborting;
  move.epoch = 2;
  move.released = 1;
  move.from_version = 41;
  move.from_text = "from";
  move.to_text = "to";
  move.proposed_by = "router-b";
  std::string error;
  auto decoded = decode_move("/santral/prod/move", encode_move(move), error);
  REQUIRE(decoded);
  CHECK(decoded->phase == MoveDocument::Phase::Aborting);
  CHECK(decoded->epoch == 2);
  CHECK(decoded->released == 1);
  CHECK(decoded->from_version == 41);
  CHECK(decoded->to_text == "to");
  CHECK(decoded->proposed_by == "router-b");
  CHECK_FALSE(decode_move("/santral/prod/move",
                          R"({"format": 1, "state": "sideways", "from": "a", "to": "b"})", error));
  CHECK(error == "etcd key /santral/prod/move: field state: expected planned, moving or aborting");
}
