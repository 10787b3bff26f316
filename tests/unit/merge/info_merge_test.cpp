#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "router/merge/merge_brief.h"

using santral::protocol::Merge;
using santral::router::make_merge;
using santral::router::MergeBrief;

namespace {

MergeBrief info_plan(std::vector<std::string> shards, int protocol = 2) {
  MergeBrief brief;
  brief.kind = Merge::Info;
  brief.command = "INFO";
  brief.fragment_names = std::move(shards);
  brief.protocol = protocol;
  return brief;
}

std::string bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}

std::string verbatim(const std::string& text) {
  return "=" + std::to_string(text.size() + 4) + "\r\ntxt:" + text + "\r\n";
}

// The merged reply, delivered in every order (all permutations: at most four shards here);
// each reply's bytes are overwritten after add(), as a read buffer would be.
std::string merged(const MergeBrief& brief, const std::vector<std::string>& replies) {
  std::vector<std::uint32_t> order(replies.size());
  std::iota(order.begin(), order.end(), 0);
  std::string first;
  bool have_first = false;
  do {
    auto merge = make_merge(brief);
    for (std::uint32_t fragment : order) {
      std::string buffer = replies[fragment];
      merge->add(fragment, buffer);
      std::fill(buffer.begin(), buffer.end(), 'x');
    }
    std::string out;
    merge->finish(out);
    if (!have_first) {
      first = out;
      have_first = true;
    }
    INFO("delivery order starting with fragment " << order.front());
    REQUIRE(out == first);
  } while (std::next_permutation(order.begin(), order.end()));
  return first;
}

const std::string kShardA =
    "# Server\r\nredis_version:7.0.15\r\ntcp_port:7001\r\n\r\n"
    "# Clients\r\nconnected_clients:3\r\nblocked_clients:0\r\nmaxclients:10000\r\n"
    "client_recent_max_input_buffer:20\r\n\r\n"
    "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:0\r\n"
    "maxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\nmem_fragmentation_ratio:2.50\r\n"
    "mem_allocator:jemalloc-5.2.1\r\n\r\n"
    "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:5\r\n"
    "rdb_last_save_time:1700000000\r\nrdb_last_bgsave_status:ok\r\n"
    "rdb_last_bgsave_time_sec:-1\r\n\r\n"
    "# Stats\r\ntotal_commands_processed:100\r\ninstantaneous_input_kbps:0.50\r\n"
    "keyspace_hits:7\r\n\r\n"
    "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n"
    "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:0.500000\r\n\r\n"
    "# Commandstats\r\n"
    "cmdstat_get:calls=10,usec=25,usec_per_call=2.50,rejected_calls=0,failed_calls=1\r\n\r\n"
    "# Errorstats\r\nerrorstat_ERR:count=3\r\n\r\n"
    "# Latencystats\r\nlatency_percentiles_usec_get:p50=1.003,p99=2.007,p99.9=3.007\r\n\r\n"
    "# Cluster\r\ncluster_enabled:0\r\n\r\n"
    "# Keyspace\r\ndb0:keys=10,expires=2,avg_ttl=1000\r\n";

const std::string kShardB =
    "# Server\r\nredis_version:7.0.15\r\ntcp_port:7002\r\n\r\n"
    "# Clients\r\nconnected_clients:5\r\nblocked_clients:1\r\nmaxclients:10000\r\n"
    "client_recent_max_input_buffer:8\r\n\r\n"
    "# Memory\r\nused_memory:2097152\r\nused_memory_human:2.00M\r\nmaxmemory:0\r\n"
    "maxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\nmem_fragmentation_ratio:1.10\r\n"
    "mem_allocator:jemalloc-5.2.1\r\n\r\n"
    "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:1\r\n"
    "rdb_last_save_time:1700000100\r\nrdb_last_bgsave_status:ok\r\n"
    "rdb_last_bgsave_time_sec:-1\r\n\r\n"
    "# Stats\r\ntotal_commands_processed:50\r\ninstantaneous_input_kbps:1.25\r\n"
    "keyspace_hits:3\r\n\r\n"
    "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n\r\n"
    "# CPU\r\nused_cpu_sys:0.750001\r\nused_cpu_user:0.250000\r\n\r\n"
    "# Commandstats\r\n"
    "cmdstat_get:calls=5,usec=5,usec_per_call=1.00,rejected_calls=1,failed_calls=0\r\n"
    "cmdstat_set:calls=3,usec=10,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\n\r\n"
    "# Errorstats\r\nerrorstat_ERR:count=1\r\nerrorstat_WRONGTYPE:count=2\r\n\r\n"
    "# Latencystats\r\nlatency_percentiles_usec_get:p50=9.000,p99=9.000,p99.9=9.000\r\n\r\n"
    "# Cluster\r\ncluster_enabled:0\r\n\r\n"
    "# Keyspace\r\ndb0:keys=30,expires=2,avg_ttl=3000\r\ndb1:keys=1,expires=0,avg_ttl=0\r\n";

const std::string kMergedAB =
    "# Server\r\nredis_version:7.0.15\r\ntcp_port:7001\r\n\r\n"
    "# Clients\r\nconnected_clients:8\r\nblocked_clients:1\r\nmaxclients:10000\r\n"
    "client_recent_max_input_buffer:20\r\n\r\n"
    "# Memory\r\nused_memory:3145728\r\nused_memory_human:3.00M\r\nmaxmemory:0\r\n"
    "maxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\nmem_fragmentation_ratio:2.50\r\n"
    "mem_allocator:jemalloc-5.2.1\r\n\r\n"
    "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:6\r\n"
    "rdb_last_save_time:1700000000\r\nrdb_last_bgsave_status:ok\r\n"
    "rdb_last_bgsave_time_sec:-1\r\n\r\n"
    "# Stats\r\ntotal_commands_processed:150\r\ninstantaneous_input_kbps:1.75\r\n"
    "keyspace_hits:10\r\n\r\n"
    "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n"
    "# CPU\r\nused_cpu_sys:2.000001\r\nused_cpu_user:0.750000\r\n\r\n"
    "# Commandstats\r\n"
    "cmdstat_get:calls=15,usec=30,usec_per_call=2.00,rejected_calls=1,failed_calls=1\r\n"
    "cmdstat_set:calls=3,usec=10,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\n\r\n"
    "# Errorstats\r\nerrorstat_ERR:count=4\r\nerrorstat_WRONGTYPE:count=2\r\n\r\n"
    "# Latencystats\r\nlatency_percentiles_usec_get:p50=1.003,p99=2.007,p99.9=3.007\r\n\r\n"
    "# Cluster\r\ncluster_enabled:0\r\n\r\n"
    // avg_ttl weighted by expires: (2 * 1000 + 2 * 3000) / 4
    "# Keyspace\r\ndb0:keys=40,expires=4,avg_ttl=2000\r\ndb1:keys=1,expires=0,avg_ttl=0\r\n";

}  // namespace

TEST_CASE("INFO from two shards reads like one server's") {
  CHECK(merged(info_plan({"a", "b"}), {bulk(kShardA), bulk(kShardB)}) == bulk(kMergedAB));
}

TEST_CASE("INFO over RESP3 answers with a verbatim string") {
  CHECK(merged(info_plan({"a", "b"}, 3), {verbatim(kShardA), verbatim(kShardB)}) ==
        verbatim(kMergedAB));
}

TEST_CASE("INFO adds Santral's overrides, a Shards section and its own sections") {
  const std::string a =
      "# Clients\r\nconnected_clients:2\r\n\r\n# Memory\r\nused_memory:100\r\n\r\n"
      "# Replication\r\nrole:master\r\n\r\n# Keyspace\r\ndb0:keys=5,expires=0,avg_ttl=0\r\n";
  const std::string b =
      "# Clients\r\nconnected_clients:3\r\n\r\n# Memory\r\nused_memory:200\r\n\r\n"
      "# Replication\r\nrole:slave\r\n\r\n"
      "# Keyspace\r\ndb0:keys=1,expires=1,avg_ttl=50\r\ndb2:keys=4,expires=0,avg_ttl=0\r\n";
  const std::string c = "# Clients\r\nconnected_clients:4\r\n\r\n# Keyspace\r\n";
  const std::string expected =
      "# Clients\r\nconnected_clients:42\r\n\r\n"
      "# Memory\r\nused_memory:300\r\n\r\n"
      "# Replication\r\nrole:master\r\n\r\n"
      "# Keyspace\r\ndb0:keys=6,expires=1,avg_ttl=50\r\ndb2:keys=4,expires=0,avg_ttl=0\r\n\r\n"
      "# Shards\r\n"
      "shard_0:name=a,keys=5,used_memory=100,connected_clients=2,role=master\r\n"
      "shard_1:name=b,keys=5,used_memory=200,connected_clients=3,role=slave\r\n"
      "shard_2:name=c,keys=0,used_memory=0,connected_clients=4,role=unknown\r\n\r\n"
      "# Santral\r\nsantral_version:0.1.0\r\n";

  auto brief = info_plan({"a", "b", "c"});
  brief.info.overrides = {{"connected_clients", "42"}, {"not_listed", "1"}};
  brief.info.shards_section = true;
  brief.info.local_sections = "# Santral\r\nsantral_version:0.1.0\r\n";
  CHECK(merged(brief, {bulk(a), bulk(b), bulk(c)}) == bulk(expected));
  brief.protocol = 3;
  CHECK(merged(brief, {verbatim(a), verbatim(b), verbatim(c)}) == verbatim(expected));
}

TEST_CASE("INFO keeps fragment 0's section order and adds sections only others list") {
  const std::string a = "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n\r\n# Server\r\nx:1\r\n";
  const std::string b =
      "# Server\r\nx:2\r\n\r\n# Modules\r\nmodule:name=search,ver=20000\r\n\r\n"
      "# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n";
  CHECK(merged(info_plan({"a", "b"}), {bulk(a), bulk(b)}) ==
        bulk("# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\n\r\n# Server\r\nx:1\r\n\r\n"
             "# Modules\r\nmodule:name=search,ver=20000\r\n"));
}

TEST_CASE("INFO sums numbers, keeps settings and ratios, recomputes human sizes") {
  const std::string a =
      "# Memory\r\nused_memory:1073741824\r\nused_memory_human:1.00G\r\nused_memory_rss:512\r\n"
      "used_memory_rss_human:512B\r\nused_memory_peak_perc:50.00%\r\n"
      "allocator_frag_ratio:1.01\r\ntotal_system_memory:1000\r\n"
      "mem_not_counted_for_evict:abc\r\n";
  const std::string b =
      "# Memory\r\nused_memory:536870912\r\nused_memory_human:512.00M\r\nused_memory_rss:511\r\n"
      "used_memory_rss_human:511B\r\nused_memory_peak_perc:70.00%\r\n"
      "allocator_frag_ratio:1.20\r\ntotal_system_memory:1000\r\n"
      "mem_not_counted_for_evict:1\r\nlazyfree_pending_objects:7\r\n";
  CHECK(merged(info_plan({"a", "b"}), {bulk(a), bulk(b)}) ==
        bulk("# Memory\r\nused_memory:1610612736\r\nused_memory_human:1.50G\r\n"
             "used_memory_rss:1023\r\nused_memory_rss_human:1023B\r\n"
             "used_memory_peak_perc:50.00%\r\nallocator_frag_ratio:1.01\r\n"
             "total_system_memory:1000\r\nmem_not_counted_for_evict:abc\r\n"
             "lazyfree_pending_objects:7\r\n"));
}

TEST_CASE("INFO of a section no shard has is empty, or only Santral's own") {
  CHECK(merged(info_plan({"a", "b"}), {"$0\r\n\r\n", "$0\r\n\r\n"}) == "$0\r\n\r\n");
  auto brief = info_plan({"a", "b"}, 3);
  brief.info.local_sections = "# Santral\r\nworkers:2\r\n";
  CHECK(merged(brief, {"=4\r\ntxt:\r\n", "=4\r\ntxt:\r\n"}) ==
        verbatim("# Santral\r\nworkers:2\r\n"));
}

TEST_CASE("INFO names every shard that failed") {
  const auto brief = info_plan({"a", "b", "c"});
  CHECK(merged(brief, {bulk(kShardA), "-LOADING Redis is loading the dataset in memory\r\n",
                       "-ERR santral: shard 'c' (10.0.0.3:6379) is unavailable\r\n"}) ==
        "-ERR santral: INFO failed on shard(s) 'b', 'c': LOADING Redis is loading the dataset "
        "in memory\r\n");
  CHECK(merged(brief, {bulk(kShardA), ":1\r\n", bulk(kShardB)}) ==
        "-ERR santral: INFO failed on shard(s) 'b': ERR santral: shard 'b' sent an unexpected "
        "reply to INFO\r\n");
}
