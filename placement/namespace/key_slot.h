#pragma once

#include <cstdint>
#include <string_view>

namespace santral::placement {

// Redis Cluster's slot of a shard key: CRC16-XMODEM(bytes) mod 16384, as CLUSTER KEYSLOT
// computes it once the hash tag has been applied (the caller passes the tag text when the
// key has one).
std::uint32_t key_slot(std::string_view shard_key);

}  // namespace santral::placement
