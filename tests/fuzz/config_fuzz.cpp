// The config loader on arbitrary text: either a Config or a ConfigError naming the problem;
// never a crash and never another exception (Santral must not die on a bad reload).
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"
#include "config/config_error.h"
#include "placement/shard_map.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto config = santral::config::parse_config(text, "fuzz.yaml");
    FUZZ_CHECK(!config.shards.empty());
    FUZZ_CHECK(config.workers >= 1);
    santral::placement::ShardMap map(config);
    FUZZ_CHECK(map.shard_for_key("key") < map.shard_count());
  } catch (const santral::config::ConfigError& e) {
    FUZZ_CHECK(std::string(e.what()).rfind("fuzz.yaml", 0) == 0);
  }
  return 0;
}
