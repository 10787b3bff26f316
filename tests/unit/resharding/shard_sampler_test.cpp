// sample_shards without a shard to sample: the only case with no connection. Sampling real
// shards (DBSIZE, RANDOMKEY, MEMORY USAGE) needs a socket each: not here.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "router/resharding/shard_sampler.h"

using namespace santral;

TEST_CASE("sample_shards of no shard reports nothing, at once, once") {
  boost::asio::io_context io;
  auto topology = placement::make_topology(
      config::parse_config("shards:\n  - {name: shard0, address: 127.0.0.1:7000}\n", "t.yaml"), 1);
  int reports = 0;
  std::size_t samples = 99;
  auto stop =
      router::sample_shards(io, topology, {}, 10, [&](std::vector<router::ShardSample> got) {
        ++reports;
        samples = got.size();
      });
  CHECK(reports == 1);
  CHECK(samples == 0);
  stop();  // after the report: nothing more
  CHECK(io.poll() == 0);
  CHECK(reports == 1);
}
