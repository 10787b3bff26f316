#include "placement/namespace/key_slot.h"

#include <boost/crc.hpp>

#include "config/namespace/namespace_config.h"

namespace santral::placement {

std::uint32_t key_slot(std::string_view shard_key) {
  // XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor (Redis's crc16.c).
  boost::crc_optimal<16, 0x1021, 0, 0, false, false> crc;
  crc.process_bytes(shard_key.data(), shard_key.size());
  return crc.checksum() % config::kSlotCount;
}

}  // namespace santral::placement
