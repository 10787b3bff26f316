#include "router/admin/shard_info.h"

#include <charconv>
#include <utility>

#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"
#include "router/merge/info_text.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

std::uint64_t number(std::string_view text) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Each shard gets two requests (slot = the shard, fragment = which); the last reply in
// answers.
class ShardInfoSink final : public ReplySink {
 public:
  ShardInfoSink(std::vector<ShardInfo> infos, FanOutAnswer<std::vector<ShardInfo>> answer)
      : infos_(std::move(infos)), left_(infos_.size() * 2), answer_(std::move(answer)) {}

  void deliver(std::uint64_t slot, std::uint32_t /*fragment*/, std::string_view reply) override {
    ShardInfo& info = infos_[slot];
    protocol::ReplyValue value;
    if (!protocol::parse_reply(reply, value)) {
      info.error = "unreadable reply to INFO";
    } else if (value.is_error()) {
      info.error = std::string(value.text);
    } else {
      info.answered = true;
      read_info_text(value.text, info);
    }
    if (--left_ == 0) std::exchange(answer_, nullptr)(std::move(infos_));
  }

 private:
  std::vector<ShardInfo> infos_;
  std::size_t left_;
  FanOutAnswer<std::vector<ShardInfo>> answer_;
};

// On `worker`'s thread.
void ask_shards(WorkerServices& worker, FanOutAnswer<std::vector<ShardInfo>> answer) {
  const auto& map = worker.shard_map();
  std::vector<ShardInfo> infos(map.shard_count());
  for (std::size_t s = 0; s < map.shard_count(); ++s) {
    infos[s].name = map.shard(s).name;
    infos[s].address = map.shard(s).address.text();
  }
  if (infos.empty()) return answer({});
  std::string memory, keyspace;
  protocol::RespWriter(memory).command(std::vector<std::string_view>{"INFO", "memory"});
  protocol::RespWriter(keyspace).command(std::vector<std::string_view>{"INFO", "keyspace"});
  std::size_t shards = infos.size();
  ReplySinkPtr sink(new ShardInfoSink(std::move(infos), std::move(answer)));
  auto profile = worker.pool().default_profile();
  for (std::size_t s = 0; s < shards; ++s) {
    auto& connection = worker.pool().shared(s, profile, 0);
    connection.send(memory, sink, s, 0);
    connection.send(keyspace, sink, s, 1);
  }
}

}  // namespace

void read_info_text(std::string_view text, ShardInfo& info) {
  for (const auto& section : parse_info_text(text))
    for (const auto& line : section.lines) {
      if (line.key == "used_memory") info.used_memory = number(line.value);
      if (line.key == "maxmemory") info.maxmemory = number(line.value);
      if (section.name != "Keyspace" || !line.key.starts_with("db")) continue;
      for (const auto& field : split_subfields(line.value)) {
        if (field.name == "keys") info.keys += number(field.value);
        if (field.name == "expires") info.expires += number(field.value);
      }
    }
}

void take_shard_info(ControlPlane& server, std::function<void(std::vector<ShardInfo>)> done) {
  auto workers = server.worker_services();
  if (workers.empty()) return done({});
  std::vector<WorkerServices*> first{workers.front()};
  fan_out_async<std::vector<ShardInfo>, WorkerServices>(
      server.io(), first, ask_shards,
      [done = std::move(done)](std::vector<std::vector<ShardInfo>> answers) {
        done(std::move(answers.front()));
      });
}

}  // namespace santral::router
