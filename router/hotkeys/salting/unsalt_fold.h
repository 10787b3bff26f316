#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "router/backend/backend_connection.h"
#include "router/hotkeys/salting/salted_layout.h"

namespace santral::router {

class Worker;

// Where a fold's requests go, and what hears its reply (+OK, or the error that stopped it).
struct UnsaltFoldTarget {
  ConnectionProfile profile;
  std::uint64_t client_id = 0;
  std::function<void(const std::string& reply)> done;
};

// UNSALT's last step, once no request can reach a sub-key any more (salt_fence.h): each
// sub-key in turn is emptied and added onto the key, one after the other on `worker`:
//
//   string counter: GETDEL sub-key            -> INCRBY (INCRBYFLOAT for a fraction) key value
//   hash:           HGETALL + DEL (one EVAL)  -> HINCRBY (HINCRBYFLOAT) key field value, each
//
// (GETDEL answers WRONGTYPE on a hash and leaves it untouched: the hash way is then taken.)
// Each step is routed when it is sent, by the topology then in force: during a move it pulls
// its key first (a sub-key or the key may still be on its old owner). A GET meanwhile reads
// the key alone: it may see less than the true total (the sub-keys not
// folded yet, and a value between its taking and its adding), never more; once the fold is
// done, it sees everything. `log_prefix` starts its log lines.
void fold_sub_keys(Worker& worker, const char* log_prefix, SaltedCounter counter,
                   UnsaltFoldTarget target);

}  // namespace santral::router
