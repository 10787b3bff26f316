#include "router/tracking/tracked_keys.h"

#include <algorithm>
#include <set>
#include <string>

#include <catch2/catch.hpp>

using santral::router::TrackedKeys;

TEST_CASE("a key's readers are told once, then forgotten until they read it again") {
  TrackedKeys keys;
  keys.add("user:1", 7);
  keys.add("user:1", 8);
  keys.add("user:1", 7);  // the same client twice is one reader
  auto readers = keys.take("user:1");
  std::sort(readers.begin(), readers.end());
  CHECK(readers == TrackedKeys::Clients{7, 8});
  CHECK(keys.take("user:1").empty());
  CHECK(keys.size() == 0);
}

TEST_CASE("NOLOOP: a client that writes a key is no longer among its readers") {
  TrackedKeys keys;
  keys.add("k", 1);
  keys.add("k", 2);
  keys.forget("k", 1);
  CHECK(keys.take("k") == TrackedKeys::Clients{2});
  keys.add("only", 3);
  keys.forget("only", 3);
  CHECK(keys.size() == 0);
}

TEST_CASE("past tracking_table_max_keys, other keys are dropped with their readers") {
  TrackedKeys keys(100);
  std::set<std::string> dropped;
  std::size_t dropped_readers = 0;
  for (int i = 0; i < 300; ++i) {
    std::string key = "key:" + std::to_string(i);
    for (auto& [name, clients] : keys.add(key, 42)) {
      CHECK(name != key);  // never the key just read
      CHECK(dropped.insert(name).second);
      dropped_readers += clients.size();
    }
    CHECK(keys.size() <= 100);
  }
  CHECK(keys.size() == 100);
  CHECK(dropped.size() == 200);
  CHECK(dropped_readers == 200);
  // What is left is exactly what was not dropped.
  for (int i = 0; i < 300; ++i) {
    std::string key = "key:" + std::to_string(i);
    CHECK(keys.take(key).empty() == dropped.contains(key));
  }
}
