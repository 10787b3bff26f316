#include "tests/support/cluster.h"

#include <stdexcept>

#include "config/config.h"

namespace santral::test {

Cluster::Cluster(std::size_t shards, const std::string& extra_yaml,
                 std::vector<std::string> santral_args) {
  std::vector<const RedisServer*> servers;
  for (std::size_t i = 0; i < shards; ++i) {
    shards_.push_back(std::make_unique<RedisServer>());
    servers.push_back(shards_.back().get());
  }
  santral_ = std::make_unique<SantralProcess>(SantralProcess::config_for(servers, extra_yaml),
                                              std::move(santral_args));
  map_ = std::make_unique<placement::ShardMap>(config::load_config(santral_->config_path()));
}

std::string Cluster::key_on(std::size_t index, const std::string& prefix) const {
  for (int n = 0;; ++n) {
    std::string key = prefix + std::to_string(n);
    if (owner(key) == index) return key;
  }
}

RedisClient Cluster::client_as(const std::string& user, const std::string& password) const {
  auto client = this->client();
  auto answer = client.command({"AUTH", user, password});
  if (!answer.is_ok()) throw std::runtime_error("AUTH " + user + " answered: " + answer.str);
  return client;
}

}  // namespace santral::test
