#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "router/hotkeys/detection/hot_key_detector.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

class WorkerServices;

// Asks every worker, on its own thread, for the keys it sees hottest (with their owning shard
// and salting), adds the workers' rates up key by key, and hands them, hottest first, to
// `done` on `home`'s thread (fan_out: `done` may hold a client, it never leaves home).
// For automatic salting and the balancer.
void collect_hot_keys(const std::vector<WorkerServices*>& workers, boost::asio::io_context& home,
                      std::function<void(std::vector<HotKeyRate>)> done);

// What an operator asks for (SANTRAL HOTKEYS, the admin API's /hotkeys): the `count` hottest
// keys, then every salted counter besides, hot or not (one without traffic is listed with its
// rates at 0), so that what was salted is always in sight.
void list_hot_keys(const std::vector<WorkerServices*>& workers, boost::asio::io_context& home,
                   std::size_t count, std::function<void(std::vector<HotKeyRate>)> done);

// list_hot_keys' choice among rates sorted hottest first.
std::vector<HotKeyRate> hottest_and_salted(std::vector<HotKeyRate> rates, std::size_t count);

}  // namespace santral::router
