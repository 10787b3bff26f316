#pragma once

#include <cstdint>
#include <functional>

namespace santral::router {

// The clients of this worker thread with a cross-shard write in flight (router/routes/
// cross_shard_write.cpp). Such a write sends its later stages only when the earlier ones have
// answered, so a later request of the same client must wait for it, or it would overtake the
// write on the destination's shard (dispatch holds it, as it holds requests behind WAIT).
// A switch of topology waits for the writes in flight too: their later stages go to shards
// chosen under the old one (router/routes/in_flight_barrier.h).
//
// A client and its requests live on one worker thread, so the registry is per thread: no lock.
// started() gives the write a number that ended() takes back.
std::uint64_t staged_write_started(std::uint64_t client);
void staged_write_ended(std::uint64_t client, std::uint64_t write);
bool staged_write_in_flight(std::uint64_t client);
// Runs `done` once every write of this thread started before now has ended (at once when none).
void after_staged_writes(std::function<void()> done);

}  // namespace santral::router
