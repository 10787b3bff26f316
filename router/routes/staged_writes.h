#pragma once

#include <cstdint>

namespace santral::router {

// The clients of this worker thread with a cross-shard write in flight (router/routes/
// cross_shard_write.cpp). Such a write sends its later stages only when the earlier ones have
// answered, so a later request of the same client must wait for it, or it would overtake the
// write on the destination's shard (dispatch holds it, as it holds requests behind WAIT).
//
// A client and its requests live on one worker thread, so the registry is per thread: no lock.
void staged_write_started(std::uint64_t client);
void staged_write_ended(std::uint64_t client);
bool staged_write_in_flight(std::uint64_t client);

}  // namespace santral::router
