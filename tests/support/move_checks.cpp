#include "tests/support/move_checks.h"

#include <catch2/catch.hpp>

#include <fstream>

#include "tests/support/process.h"

namespace santral::test {

std::string shards_yaml(const std::vector<RedisServer*>& shards) {
  std::string yaml = "shards:\n";
  for (std::size_t i = 0; i < shards.size(); ++i)
    yaml += "  - {name: s" + std::to_string(i) + ", address: " + shards[i]->address() + "}\n";
  return yaml;
}

std::map<std::string, std::string> reshard_status(RedisClient& client) {
  auto reply = client.command({"SANTRAL", "RESHARD", "STATUS"});
  REQUIRE(reply.type == Reply::Type::Array);
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
    fields[reply.elements[i].str] = reply.elements[i + 1].str;
  return fields;
}

bool wait_for_state(RedisClient& client, const std::string& state, int timeout_ms) {
  return wait_until([&] { return reshard_status(client)["state"] == state; }, timeout_ms);
}

std::string push_map(RedisClient& client, const std::string& yaml,
                     const std::function<bool()>& made) {
  std::string last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto pushed = client.command({"SANTRAL", "MAP", "PUSH", yaml});
    last = pushed.str;
    if (!pushed.is_error()) return last;
    INFO("SANTRAL MAP PUSH answered: " << last);
    if (wait_until(made, 10000)) return "";
  }
  FAIL("SANTRAL MAP PUSH was not made in 5 tries; the last answer: " << last);
  return last;
}

std::string plan_move(RedisClient& client, const std::string& yaml) {
  auto pushed =
      push_map(client, yaml, [&] { return reshard_status(client)["state"] == "planned"; });
  INFO("SANTRAL MAP PUSH answered: " << pushed);
  REQUIRE((pushed.empty() || pushed.find("planned") != std::string::npos));
  REQUIRE(wait_for_state(client, "planned", 10000));
  return pushed;
}

Writers::Writers(int port, int threads, std::string prefix) : prefix_(std::move(prefix)) {
  for (int t = 0; t < threads; ++t)
    threads_.emplace_back([this, port, t] {
      RedisClient client(port, 5000);
      for (int n = 0; !stop_; ++n) {
        std::string counter = prefix_ + "ctr:" + std::to_string(n % kCounters);
        ++attempted_[n % kCounters];
        auto reply = client.command({"INCR", counter});
        if (reply.type == Reply::Type::Integer) ++acked_[n % kCounters];
        std::string unique = prefix_ + "u:" + std::to_string(t) + ":" + std::to_string(n);
        if (client.command({"SET", unique, unique}).is_ok()) {
          std::lock_guard lock(mutex_);
          written_.push_back(unique);
          ++written_count_;
        } else {
          ++errors_;
        }
      }
    });
}

void Writers::stop() {
  stop_ = true;
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
}

std::map<std::string, std::vector<std::size_t>> where(const std::vector<RedisServer*>& shards) {
  std::map<std::string, std::vector<std::size_t>> out;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    auto keys = shards[s]->client().command({"KEYS", "*"});
    for (const auto& key : keys.elements)
      if (key.str != "santral:receiving") out[key.str].push_back(s);  // a MIGRATE's mark
  }
  return out;
}

void check_settled(RedisClient& client, const std::vector<RedisServer*>& shards,
                   const placement::ShardMap& map, int keys, Writers& writers,
                   const std::string& prefix) {
  auto placed = where(shards);
  for (const auto& [key, on] : placed) {
    INFO(key);
    REQUIRE(on.size() == 1);
    REQUIRE(map.shard(map.shard_for_key(key)).address.port == shards[on[0]]->port());
  }
  for (int i = 0; i < keys; ++i) {
    std::string key = prefix + "key:" + std::to_string(i);
    INFO(key);
    REQUIRE(client.command({"GET", key}).str == std::to_string(i));
    if (i % 10 == 0) REQUIRE(client.command({"TTL", key}).integer > 0);
  }
  for (int c = 0; c < Writers::kCounters; ++c) {
    auto value = client.command({"GET", writers.prefix_ + "ctr:" + std::to_string(c)});
    long long got = value.is_nil() ? 0 : std::stoll(value.str);
    INFO("ctr:" << c << " = " << got << ", acked " << writers.acked_[c] << ", attempted "
                << writers.attempted_[c]);
    REQUIRE(got >= writers.acked_[c]);
    REQUIRE(got <= writers.attempted_[c]);
  }
  for (const auto& unique : writers.written_) {
    INFO(unique);
    REQUIRE(client.command({"GET", unique}).str == unique);
  }
}

void load_keys(RedisClient& client, int keys, const std::string& prefix) {
  for (int i = 0; i < keys; ++i) {
    std::string key = prefix + "key:" + std::to_string(i);
    if (i % 10 == 0)
      client.append({"SET", key, std::to_string(i), "EX", "100000"});
    else
      client.append({"SET", key, std::to_string(i)});
  }
  for (int i = 0; i < keys; ++i) REQUIRE(client.get_reply().is_ok());
}

}  // namespace santral::test
