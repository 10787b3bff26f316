// Many clients at once, each seeing only its own replies.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("100 concurrent clients each get their own answers") {
  Cluster cluster(4, "workers: 2\n");
  constexpr int kClients = 100;
  constexpr int kRounds = 100;
  std::atomic<int> wrong{0};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      try {
        auto client = cluster.client();
        for (int r = 0; r < kRounds; ++r) {
          std::string key = "c" + std::to_string(c) + ":" + std::to_string(r);
          std::string value = std::to_string(c * 100000 + r);
          // Pipelined pairs, so replies of different clients interleave on the shared
          // backend connections.
          client.append({"SET", key, value});
          client.append({"GET", key});
          client.append({"INCR", "hits:" + std::to_string(c)});
          if (!client.get_reply().is_ok()) ++wrong;
          if (client.get_reply().str != value) ++wrong;
          if (client.get_reply().integer != r + 1) ++wrong;
        }
        ++done;
      } catch (const std::exception&) {
        ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(done == kClients);
  long long keys = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) keys += cluster.shard(s).dbsize();
  CHECK(keys == kClients * kRounds + kClients);
}
