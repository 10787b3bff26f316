#include "router/resharding/move_sampler.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <boost/asio/steady_timer.hpp>

#include "protocol/reply_value.h"
#include "router/resharding/shard_calls.h"

namespace santral::router {

namespace {

constexpr auto kGiveUpAfter = std::chrono::seconds(3);
constexpr auto kDeadlineCheck = std::chrono::milliseconds(200);

struct Sampling : std::enable_shared_from_this<Sampling> {
  Sampling(boost::asio::io_context& io) : timer(io) {}

  config::TopologyPtr topology;
  std::vector<UnitProgress> units;
  unsigned samples = 0;
  std::function<void(std::vector<UnitProgress>)> done;
  std::vector<BackendConnectionPtr> connections;
  std::vector<std::unique_ptr<ShardStats>> stats;
  std::size_t left = 0;
  boost::asio::steady_timer timer;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  UnitProgress* unit_for(std::string_view key) {
    const auto& map = *topology->map;
    const auto& move = *topology->move;
    std::size_t owner = map.shard_for_key(key);
    auto source = move.source_of(key, owner);
    if (!source) return nullptr;
    auto placement = config::placement_of(map, key);
    for (auto& unit : units)
      if (unit.unit.placement == placement && unit.unit.from == map.shard(*source).name &&
          unit.unit.to == map.shard(owner).name)
        return &unit;
    return nullptr;
  }

  // One source's DBSIZE and RANDOMKEYs are in: ask the moving ones' sizes.
  void sampled(std::size_t c, std::vector<std::string> replies) {
    protocol::ReplyValue value;
    std::uint64_t dbsize = 0;
    if (protocol::parse_reply(replies[0], value) &&
        value.type == protocol::ReplyValue::Type::Integer)
      dbsize = static_cast<std::uint64_t>(std::max<std::int64_t>(value.integer, 0));
    std::vector<std::string> keys;
    for (std::size_t i = 1; i < replies.size(); ++i) {
      protocol::ReplyValue key;
      if (!protocol::parse_reply(replies[i], key) ||
          key.type != protocol::ReplyValue::Type::BulkString)
        continue;
      keys.emplace_back(key.text);
    }
    if (dbsize == 0 || keys.empty()) return finished_one();
    double weight = double(dbsize) / double(keys.size());
    std::vector<std::string> requests;
    std::vector<UnitProgress*> owners;
    for (const auto& key : keys) {
      UnitProgress* unit = unit_for(key);
      if (unit == nullptr) continue;
      unit->keys_estimated += static_cast<std::uint64_t>(std::llround(weight));
      requests.push_back(command_bytes({"MEMORY", "USAGE", key}));
      owners.push_back(unit);
    }
    if (requests.empty()) return finished_one();
    auto self = shared_from_this();
    call_shard(*connections[c], requests, [self, owners, weight](std::vector<std::string> sizes) {
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        protocol::ReplyValue size;
        if (protocol::parse_reply(sizes[i], size) &&
            size.type == protocol::ReplyValue::Type::Integer && size.integer > 0)
          owners[i]->bytes_estimated += static_cast<std::uint64_t>(double(size.integer) * weight);
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
    report(std::move(units));
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

std::function<void()> sample_move(boost::asio::io_context& io, config::TopologyPtr topology,
                                  std::vector<UnitProgress> units, unsigned samples,
                                  std::function<void(std::vector<UnitProgress>)> done) {
  auto sampling = std::make_shared<Sampling>(io);
  sampling->units = std::move(units);
  sampling->samples = samples;
  sampling->done = std::move(done);
  std::vector<std::size_t> sources = topology->move->from_shard;
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  sampling->topology = std::move(topology);
  const auto& map = *sampling->topology->map;
  std::vector<std::string> requests = {command_bytes({"DBSIZE"})};
  for (unsigned i = 0; i < samples; ++i) requests.push_back(command_bytes({"RANDOMKEY"}));
  sampling->left = sources.size();
  for (std::size_t source : sources) {
    const auto& shard = map.shard(source);
    sampling->stats.push_back(std::make_unique<ShardStats>());
    auto connection = BackendConnectionPtr(new BackendConnection(
        io,
        BackendTarget{
            source, shard.name, shard.address, {sampling->topology->config->backend.database, 2}},
        sampling->topology->config, *sampling->stats.back()));
    connection->start();
    sampling->connections.push_back(connection);
  }
  std::function<void()> stop = [weak = std::weak_ptr<Sampling>(sampling)] {
    if (auto alive = weak.lock()) alive->finish();
  };
  if (sources.empty()) {
    sampling->finish();
    return stop;
  }
  sampling->watch();
  for (std::size_t c = 0; c < sampling->connections.size(); ++c)
    call_shard(*sampling->connections[c], requests,
               [sampling, c](std::vector<std::string> replies) {
                 sampling->sampled(c, std::move(replies));
               });
  return stop;
}

}  // namespace santral::router
