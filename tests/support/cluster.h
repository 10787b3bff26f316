#pragma once

#include <memory>
#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

namespace santral::test {

// N real redis-server shards with Santral in front of them, and Santral's own placement rule
// (loaded from the same config file) to say where each key must land.
class Cluster {
 public:
  explicit Cluster(std::size_t shards, const std::string& extra_yaml = "",
                   std::vector<std::string> santral_args = {});

  RedisServer& shard(std::size_t i) { return *shards_[i]; }
  std::size_t size() const { return shards_.size(); }
  SantralProcess& santral() { return *santral_; }
  RedisClient client(int timeout_ms = 10000) const { return santral_->client(timeout_ms); }
  // A client logged in as `user` (AUTH answered +OK, else std::runtime_error with the answer).
  RedisClient client_as(const std::string& user, const std::string& password) const;
  // Index of the shard that must hold `key`.
  std::size_t owner(const std::string& key) const { return map_->shard_for_key(key); }
  // A key named "<prefix><n>" that lives on shard `index`.
  std::string key_on(std::size_t index, const std::string& prefix = "k") const;

 private:
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<SantralProcess> santral_;
  std::unique_ptr<placement::ShardMap> map_;
};

}  // namespace santral::test
