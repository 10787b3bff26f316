#pragma once

#include <functional>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/hotkeys/detection/hot_key_detector.h"

namespace santral::router {

class Worker;

// Asks every worker, on its own thread, for the keys it sees hottest (with their owning shard
// and salting), adds the workers' rates up key by key, and hands them, hottest first, to
// `done` on `home`'s thread (fan_out: `done` may hold a client session, it never leaves home).
// For SANTRAL HOTKEYS and the admin API's /hotkeys.
void collect_hot_keys(const std::vector<Worker*>& workers, boost::asio::io_context& home,
                      std::function<void(std::vector<HotKeyRate>)> done);

}  // namespace santral::router
