// What an INFO request asks the shards and Santral for, and Santral's own section, on a fake
// worker (a real topology and pool, never connected).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "router/routes/info_sections.h"
#include "tests/support/fake_worker_services.h"

using namespace santral;
using router::parse_info_request;

namespace {

router::InfoRequest parse(std::vector<std::string_view> args) {
  return parse_info_request(args);
}

}  // namespace

TEST_CASE("INFO's sections: Santral's own, the shards', or both") {
  auto bare = parse({"INFO"});
  CHECK(bare.santral);
  CHECK_FALSE(bare.only_santral);  // and the shards' default sections
  CHECK(bare.backend_sections.empty());

  auto own = parse({"INFO", "Santral"});
  CHECK(own.santral);
  CHECK(own.only_santral);
  CHECK(own.backend_sections.empty());

  auto keyspace = parse({"INFO", "KEYSPACE"});
  CHECK_FALSE(keyspace.santral);
  CHECK_FALSE(keyspace.only_santral);
  CHECK(keyspace.backend_sections == std::vector<std::string>{"keyspace"});

  auto shards = parse({"INFO", "shards"});
  CHECK(shards.shards);
  CHECK_FALSE(shards.only_santral);  // the shards are asked for their lines

  auto all = parse({"INFO", "all"});
  CHECK(all.santral);
  CHECK(all.shards);
  CHECK(all.backend_sections == std::vector<std::string>{"all"});
}

TEST_CASE("the Santral section names the config, the placement and every shard's state") {
  test::FakeWorkerServices worker(test::kFourShards + "hash: fnv1a_64\n");
  worker.shared().failovers["shard3"] = {1700000000, "127.0.0.1:7003", "127.0.0.1:7103"};
  auto section = router::santral_info_section(worker);
  CHECK(section.starts_with("# Santral\r\n"));
  CHECK(section.find("config_file:fake.yaml\r\n") != std::string::npos);
  CHECK(section.find("hash:fnv1a_64\r\n") != std::string::npos);
  CHECK(section.find("shards:4\r\n") != std::string::npos);
  for (int s = 0; s < 4; ++s) {
    auto name = std::to_string(s);
    CHECK(section.find("shard" + name + ":name=shard" + name + ",address=127.0.0.1:700" + name +
                       ",role=primary,weight=1,state=connecting\r\n") != std::string::npos);
  }
  CHECK(section.find("shard3_last_failover:unix_time=1700000000,from=127.0.0.1:7003,"
                     "to=127.0.0.1:7103\r\n") != std::string::npos);
  CHECK(section.find("_lost_writes") == std::string::npos);

  router::LostWrites lost;
  lost.failover = {1700000000, "127.0.0.1:7003", "127.0.0.1:7103"};
  lost.verdict.lineage = router::Lineage::Behind;
  lost.verdict.read_offset = 1200;
  lost.verdict.missing_bytes = 200;
  lost.writes = router::LostWrites::Writes::Served;
  worker.shared().lost_writes["shard3"] = lost;
  CHECK(router::santral_info_section(worker).find(
            "shard3_lost_writes:writes=served,lineage=behind,unix_time=1700000000,"
            "from=127.0.0.1:7003,to=127.0.0.1:7103,read_offset=1200,missing_bytes=200\r\n") !=
        std::string::npos);
}
