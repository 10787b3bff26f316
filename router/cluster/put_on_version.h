#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "router/cluster/etcd_client.h"

namespace santral::router {

// Puts `value` at `key` if the key is still at version `expected` (a compare-and-set), and says
// why not otherwise ("" when it was made, with `revision` the version it made). A put that etcd
// did not answer may still have been made (a timeout is not a no): it is sent once more. Both
// compare the same version, so at most one is made; when the second finds the version gone,
// what etcd holds says whether the first made it. `Etcd` is EtcdClient (a scripted one in tests).
template <typename Etcd>
std::string put_on_version(Etcd& etcd, std::string_view key, std::string_view value,
                           std::int64_t expected, std::int64_t& revision) {
  for (int attempt = 0;; ++attempt) {
    try {
      if (auto written = etcd.put_if(key, value, expected)) {
        revision = *written;
        return {};
      }
      auto now = etcd.range(key);
      std::int64_t held = now.kvs.empty() ? 0 : now.kvs.front().mod_revision;
      if (attempt > 0 && held != 0 && now.kvs.front().value == value) {
        revision = held;  // the unanswered put was made
        return {};
      }
      return fmt::format(
          "it was proposed on version {}, and another change made version {} meanwhile; "
          "look at the map in force (SANTRAL SHARDMAP) and propose again",
          expected, held);
    } catch (const EtcdUnavailable& e) {
      if (attempt == 1)
        return fmt::format(
            "etcd did not answer, twice ({}); the change may still be made: SANTRAL SHARDMAP "
            "shows the map in force, and the same proposal again is refused if it was",
            e.what());
    }
  }
}

}  // namespace santral::router
