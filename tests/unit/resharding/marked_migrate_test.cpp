// plan_migrate: what one MIGRATE sends, alone or behind a receiving mark in a fleet; and
// send_migrate's answer when the MIGRATE is no longer wanted. The BackendConnections are
// constructed, never started: nothing connects.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"
#include "router/metrics/stats.h"
#include "router/resharding/marked_migrate.h"
#include "router/resharding/migrate.h"
#include "router/resharding/receiving_mark.h"

using namespace santral;

namespace {

const std::string kShards =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "resharding: {migrate_timeout_ms: 1500, hold_timeout_ms: 4000}\n";

// The words of one RESP array of bulk strings.
std::vector<std::string> words(std::string_view resp) {
  std::vector<std::string> out;
  REQUIRE(resp.starts_with("*"));
  auto line_end = resp.find("\r\n");
  std::size_t count = std::stoul(std::string(resp.substr(1, line_end - 1)));
  std::size_t at = line_end + 2;
  for (std::size_t i = 0; i < count; ++i) {
    auto end = resp.find("\r\n", at);
    std::size_t length = std::stoul(std::string(resp.substr(at + 1, end - at - 1)));
    out.emplace_back(resp.substr(end + 2, length));
    at = end + 2 + length + 2;
  }
  return out;
}

struct Shards {
  boost::asio::io_context io;
  std::shared_ptr<const config::Config> config;
  router::ShardStats stats;
  router::BackendConnectionPtr source, target;

  explicit Shards(const std::string& yaml)
      : config(std::make_shared<const config::Config>(config::parse_config(yaml, "test.yaml"))) {
    source = new router::BackendConnection(
        io, router::BackendTarget{0, "shard0", config->shards[0].address, {}}, config, stats);
    target = new router::BackendConnection(
        io, router::BackendTarget{1, "shard1", config->shards[1].address, {}}, config, stats);
  }
};

struct Recorder final : router::ReplySink {
  std::vector<std::string> replies;
  std::uint64_t slot = 0;
  std::uint32_t fragment = 0;
  void deliver(std::uint64_t s, std::uint32_t f, std::string_view reply) override {
    slot = s;
    fragment = f;
    replies.emplace_back(reply);
  }
};

}  // namespace

TEST_CASE("plan_migrate alone: the plain MIGRATE to the source, no mark") {
  Shards shards(kShards);
  std::vector<std::string_view> keys = {"a", "b"};
  auto before = std::chrono::steady_clock::now();
  auto send = router::plan_migrate(*shards.config, shards.config->shards[1].address, 4, keys,
                                   *shards.source, *shards.target, nullptr);
  CHECK(send.source == shards.source);
  CHECK(send.target == shards.target);  // for comparing copies on BUSYKEY (key_conflict.h)
  CHECK_FALSE(send.marked);
  CHECK(send.keys == std::vector<std::string>{"a", "b"});
  CHECK(send.mark.empty());
  CHECK(send.unmark.empty());
  CHECK(send.bytes ==
        router::migrate_command(*shards.config, shards.config->shards[1].address, 4, keys));
  CHECK(send.deadline >= before + std::chrono::milliseconds(4000));
  CHECK(send.deadline <= std::chrono::steady_clock::now() + std::chrono::milliseconds(4000));
}

TEST_CASE("plan_migrate in a fleet: MIGRATE unless receiving, behind a mark on the target") {
  Shards shards(kShards + "cluster: {etcd: [127.0.0.1:2379], name: fleet}\n");
  REQUIRE(shards.config->cluster.enabled());
  std::vector<std::string_view> keys = {"k1"};
  auto send = router::plan_migrate(*shards.config, shards.config->shards[1].address, 3, keys,
                                   *shards.source, *shards.target, nullptr);
  CHECK(send.source == shards.source);
  CHECK(send.target == shards.target);
  CHECK(send.bytes == router::migrate_unless_receiving(*shards.config,
                                                       shards.config->shards[1].address, 3, keys));
  auto mark = words(send.mark);
  auto unmark = words(send.unmark);
  REQUIRE(mark.size() == 7);
  REQUIRE(unmark.size() == 6);
  CHECK(mark[3] == router::kReceivingMarkKey);
  // The mark and its taking back name one holder; the mark lasts migrate_timeout_ms.
  CHECK(mark[4] == unmark[4]);
  CHECK(mark[5] == "1500");
  CHECK(mark[6] == "3");
  CHECK(unmark[5] == "3");
  // Each MIGRATE has a mark of its own.
  auto other = router::plan_migrate(*shards.config, shards.config->shards[1].address, 3, keys,
                                    *shards.source, *shards.target, nullptr);
  CHECK(words(other.mark)[4] != mark[4]);
}

TEST_CASE("send_migrate: no longer wanted, +NOKEY and nothing sent") {
  Shards shards(kShards);
  std::vector<std::string_view> keys = {"a"};
  int asked = 0;
  auto send = router::plan_migrate(*shards.config, shards.config->shards[1].address, 0, keys,
                                   *shards.source, *shards.target, [&asked] {
                                     ++asked;
                                     return false;
                                   });
  boost::intrusive_ptr<Recorder> sink(new Recorder);
  router::send_migrate(shards.io, std::move(send), sink, 17, 2);
  CHECK(asked == 1);
  REQUIRE(sink->replies.size() == 1);
  CHECK(sink->replies[0] == "+NOKEY\r\n");
  CHECK(sink->slot == 17);
  CHECK(sink->fragment == 2);
  CHECK(router::migrated(sink->replies[0]));
  CHECK(shards.stats.requests == 0);
}
