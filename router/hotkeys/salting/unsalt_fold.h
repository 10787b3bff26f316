#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "router/backend/backend_connection.h"
#include "router/hotkeys/salting/salted_layout.h"

namespace santral::router {

class WorkerServices;

// Where a fold's requests go, and what hears its reply (+OK, or the error that stopped it).
struct UnsaltFoldTarget {
  ConnectionProfile profile;
  std::uint64_t client_id = 0;
  std::function<void(const std::string& reply)> done;
};

// UNSALT's last step, once no request can reach a sub-key any more (salting_barrier.h): each
// sub-key in turn is read, added onto the key, then deleted, one after the other on `worker`:
//
//   read:   GET sub-key (HGETALL when it holds a hash)         on the sub-key's shard
//   add:    one EVAL: unless the fold's mark is there, INCRBY  on the key's shard
//           (INCRBYFLOAT when INCRBY refuses; HINCRBY or HINCRBYFLOAT per field of a hash),
//           then set the mark (a key of its own, gone after a minute)
//   delete: DEL sub-key                                        on the sub-key's shard
//
// Nothing is taken before it is added, and the mark makes the add one that runs once however
// often it is sent, so a step whose shard stalls, restarts, refuses or loses its answer is
// sent again (after a short pause, for up to kFoldStepDeadline) instead of losing the part.
// When the key's shard changed between two adds (a move), the mark is looked for where the
// earlier add went first.
// Each step is routed when it is sent, by the topology then in force: during a move it pulls
// its key first (a sub-key or the key may still be on its old owner). A GET meanwhile reads
// the key alone: it may see less than the true total (the sub-keys not folded yet), never
// more; once the fold is done, it sees everything. `log_prefix` starts its log lines.
void fold_sub_keys(WorkerServices& worker, const char* log_prefix, SaltedCounter counter,
                   UnsaltFoldTarget target);

}  // namespace santral::router
