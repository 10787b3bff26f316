#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

// One MIGRATE a request needs (a pull's group, a fold's key), ready to go: alone, or in a fleet
// behind a receiving mark on its target (receiving_mark.h).
struct MigrateSend {
  BackendConnectionPtr source;
  BackendConnectionPtr target;  // compared with on BUSYKEY (key_conflict.h); marked in a fleet
  bool marked = false;          // a fleet's: the target is marked as receiving first
  std::vector<std::string> keys;
  std::string bytes;         // the MIGRATE (in a fleet: run only while the source is unmarked)
  std::string mark, unmark;  // to the target
  std::chrono::steady_clock::time_point deadline;  // a refused MIGRATE is sent again until then
  std::chrono::milliseconds limit;                 // its answer's (migrate_answer_timeout)
  // Asked before each MIGRATE goes out; false: it does not, and the reply is +NOKEY (nothing
  // moved; the caller routes its request again).
  std::function<bool()> still_wanted;
  // Runs once the MIGRATE is known to be over: answered, or given up on and then proven done
  // or dead by its source (draining_connections.h), or never sent. What keeps other MIGRATEs
  // out of its way (the migration gate's claim) is let go here, not on the answer.
  std::function<void()> settled;
};

// `keys` from `source` to `target` (at `to`), in `database`; marked in a fleet; refusals sent
// again until resharding.hold_timeout_ms from now.
MigrateSend plan_migrate(const config::Config& config, const config::Endpoint& to, int database,
                         std::span<const std::string_view> keys, BackendConnection& source,
                         BackendConnection& target, std::function<bool()> still_wanted);

// Sends it and hands `sink` one reply as (slot, fragment): the MIGRATE's, the mark's error, or
// +NOKEY when it was no longer wanted. A refusal is sent again after a pause of a few
// milliseconds (doubling to 50, with jitter, so that two refused routers do not meet again); a
// BUSYKEY is settled (key_conflict.h) and the MIGRATE sent again.
void send_migrate(boost::asio::io_context& io, MigrateSend send, ReplySinkPtr sink,
                  std::uint64_t slot, std::uint32_t fragment);

}  // namespace santral::router
