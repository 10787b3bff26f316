#include "router/hotkeys/near_cache/write_coherence.h"

#include "router/hotkeys/near_cache/near_cache.h"

namespace santral::router {

void WriteCoherence::forget_when_answered(std::string_view key, bool all) {
  written_keys_.push_back({WrittenKey::kNoSlot, std::string(key), all});
}

void WriteCoherence::opened(std::uint64_t slot, bool write, bool answers_writes) {
  if (write) after_last_write_ = slot + 1;
  if (!answers_writes) return;
  for (auto it = written_keys_.rbegin();
       it != written_keys_.rend() && it->slot == WrittenKey::kNoSlot; ++it)
    it->slot = slot;
}

void WriteCoherence::forget_answered(std::uint64_t head, bool now, NearCache& cache) {
  while (!written_keys_.empty()) {
    const auto& written = written_keys_.front();
    bool answered = written.slot == WrittenKey::kNoSlot ? now : written.slot < head;
    if (!answered) break;
    if (written.all) {
      cache.invalidate_all();
    } else {
      cache.invalidate(written.key);
    }
    written_keys_.pop_front();
  }
}

}  // namespace santral::router
