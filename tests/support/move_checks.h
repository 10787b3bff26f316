#pragma once

// What a test of a move checks: writers that count what was attempted and acknowledged during
// the move, where every key is on the shards, and that once the move is over each key is on its
// owner alone, with its value and TTL, and nothing the writers had acknowledged is lost.
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "placement/shard_map.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

namespace santral::test {

// A `shards:` list naming them s0, s1, ...
std::string shards_yaml(const std::vector<RedisServer*>& shards);

// SANTRAL RESHARD STATUS as a map of its fields.
std::map<std::string, std::string> reshard_status(RedisClient& client);
bool wait_for_state(RedisClient& client, const std::string& state, int timeout_ms = 60000);

// SANTRAL MAP PUSH of `yaml` through `client`, as an operator would do it on a loaded machine:
// an answer that is not the change's (etcd did not answer in time: the change may or may not
// have been made, or another change came first) is not a no; `made` says from what is in force
// whether it was, and a push not made is sent again (at most 5 times). Returns the answer that
// made it, or "" when it was found made after an uncertain one.
std::string push_map(RedisClient& client, const std::string& yaml,
                     const std::function<bool()>& made);

// push_map of a map that moves keys: the move must be planned (its answer says so, or STATUS
// through `client` shows it). Returns push_map's answer.
std::string plan_move(RedisClient& client, const std::string& yaml);

// Writes while the move runs: INCRs of a few counters (each counted when sent and when
// acknowledged) and SETs of unique keys (each remembered when acknowledged). `prefix` goes
// before every key, for namespaces that match on it.
class Writers {
 public:
  Writers(int port, int threads, std::string prefix = "");
  ~Writers() { stop(); }
  void stop();
  static constexpr int kCounters = 20;
  std::atomic<long long> attempted_[kCounters]{};
  std::atomic<long long> acked_[kCounters]{};
  std::atomic<long long> errors_{0};
  std::atomic<std::size_t> written_count_{0};  // written_.size(), for other threads
  std::vector<std::string> written_;
  const std::string prefix_;

 private:
  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Every key on every shard, with the shards it is on.
std::map<std::string, std::vector<std::size_t>> where(const std::vector<RedisServer*>& shards);

// What must hold once the move is over (or aborted): each key exactly once, on its owner in
// `map`; the `keys` values load_keys wrote are all there with their TTLs; the writers lost
// nothing.
void check_settled(RedisClient& client, const std::vector<RedisServer*>& shards,
                   const placement::ShardMap& map, int keys, Writers& writers,
                   const std::string& prefix = "");

// SETs <prefix>key:0 .. key:<keys-1> to their numbers, every tenth with a TTL.
void load_keys(RedisClient& client, int keys, const std::string& prefix = "");

}  // namespace santral::test
