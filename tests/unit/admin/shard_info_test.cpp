#include "router/admin/shard_info.h"

#include <catch2/catch.hpp>

using santral::router::read_info_text;
using santral::router::ShardInfo;

TEST_CASE("a shard's keys and memory are read from its INFO memory and INFO keyspace") {
  ShardInfo info;
  read_info_text(
      "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:0\r\n"
      "maxmemory_policy:noeviction\r\n",
      info);
  read_info_text(
      "# Keyspace\r\ndb0:keys=10,expires=2,avg_ttl=1234\r\ndb3:keys=5,expires=0,avg_ttl=0\r\n",
      info);
  CHECK(info.used_memory == 1048576);
  CHECK(info.maxmemory == 0);
  CHECK(info.keys == 15);
  CHECK(info.expires == 2);

  ShardInfo empty;  // a shard with no keys has an empty Keyspace section
  read_info_text("# Keyspace\r\n", empty);
  CHECK(empty.keys == 0);
}
