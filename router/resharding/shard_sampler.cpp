#include "router/resharding/shard_sampler.h"

#include <algorithm>
#include <memory>

#include <boost/asio/steady_timer.hpp>

#include "protocol/reply_value.h"
#include "router/resharding/shard_calls.h"

namespace santral::router {

namespace {

constexpr auto kGiveUpAfter = std::chrono::seconds(3);
constexpr auto kDeadlineCheck = std::chrono::milliseconds(200);

struct Sampling : std::enable_shared_from_this<Sampling> {
  explicit Sampling(boost::asio::io_context& io) : timer(io) {}

  std::vector<ShardSample> samples;
  std::function<void(std::vector<ShardSample>)> done;
  std::vector<BackendConnectionPtr> connections;
  std::vector<std::unique_ptr<ShardStats>> stats;
  std::size_t left = 0;
  boost::asio::steady_timer timer;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  // One shard's DBSIZE and RANDOMKEYs are in: ask their sizes.
  void drawn(std::size_t c, std::vector<std::string> replies) {
    ShardSample& sample = samples[c];
    protocol::ReplyValue value;
    if (!protocol::parse_reply(replies[0], value) ||
        value.type != protocol::ReplyValue::Type::Integer) {
      sample.error = value.type == protocol::ReplyValue::Type::Error ? std::string(value.text)
                                                                     : "DBSIZE did not answer";
      return finished_one();
    }
    sample.answered = true;
    sample.keys = static_cast<std::uint64_t>(std::max<std::int64_t>(value.integer, 0));
    std::vector<std::string> requests;
    for (std::size_t i = 1; i < replies.size(); ++i) {
      protocol::ReplyValue key;
      if (!protocol::parse_reply(replies[i], key) ||
          key.type != protocol::ReplyValue::Type::BulkString)
        continue;
      sample.draws.push_back({std::string(key.text), 0});
      requests.push_back(command_bytes({"MEMORY", "USAGE", key.text}));
    }
    if (requests.empty()) return finished_one();
    auto self = shared_from_this();
    call_shard(*connections[c], requests, [self, c](std::vector<std::string> sizes) {
      auto& draws = self->samples[c].draws;
      for (std::size_t i = 0; i < sizes.size() && i < draws.size(); ++i) {
        protocol::ReplyValue size;
        if (protocol::parse_reply(sizes[i], size) &&
            size.type == protocol::ReplyValue::Type::Integer && size.integer > 0)
          draws[i].bytes = static_cast<std::uint64_t>(size.integer);
      }
      self->finished_one();
    });
  }

  void finished_one() {
    if (left > 0 && --left == 0) finish();
  }

  // Once: closing the connections fails what they still carry, which comes back here.
  void finish() {
    if (!done) return;
    auto report = std::exchange(done, nullptr);
    timer.cancel();
    for (auto& connection : connections) connection->stop();
    for (auto& sample : samples)
      if (!sample.answered && sample.error.empty()) sample.error = "did not answer within 3 s";
    report(std::move(samples));
  }

  void watch() {
    auto self = shared_from_this();
    timer.expires_after(kDeadlineCheck);
    timer.async_wait([self](boost::system::error_code ec) {
      if (ec || !self->done) return;
      auto now = std::chrono::steady_clock::now();
      if (now - self->started > kGiveUpAfter) return self->finish();
      for (auto& connection : self->connections) connection->check_deadlines(now);
      self->watch();
    });
  }
};

}  // namespace

std::function<void()> sample_shards(boost::asio::io_context& io,
                                    const placement::TopologyPtr& topology,
                                    const std::vector<std::size_t>& shards, unsigned samples,
                                    std::function<void(std::vector<ShardSample>)> done) {
  auto sampling = std::make_shared<Sampling>(io);
  sampling->done = std::move(done);
  const auto& map = *topology->map;
  std::vector<std::string> requests = {command_bytes({"DBSIZE"})};
  for (unsigned i = 0; i < samples; ++i) requests.push_back(command_bytes({"RANDOMKEY"}));
  sampling->left = shards.size();
  for (std::size_t shard_index : shards) {
    const auto& shard = map.shard(shard_index);
    sampling->samples.push_back({shard_index, false, {}, 0, {}});
    sampling->stats.push_back(std::make_unique<ShardStats>());
    auto connection = BackendConnection::open(
        io,
        BackendTarget{
            shard_index, shard.name, shard.address, {topology->config->backend.database, 2}},
        topology->config, *sampling->stats.back());
    sampling->connections.push_back(connection);
  }
  std::function<void()> stop = [weak = std::weak_ptr<Sampling>(sampling)] {
    if (auto alive = weak.lock()) alive->finish();
  };
  if (shards.empty()) {
    sampling->finish();
    return stop;
  }
  sampling->watch();
  for (std::size_t c = 0; c < sampling->connections.size(); ++c)
    call_shard(*sampling->connections[c], requests,
               [sampling, c](std::vector<std::string> replies) {
                 sampling->drawn(c, std::move(replies));
               });
  return stop;
}

}  // namespace santral::router
