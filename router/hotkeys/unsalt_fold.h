#pragma once

#include <cstdint>

#include <boost/intrusive_ptr.hpp>

#include "router/hotkeys/salted_layout.h"

namespace santral::router {

class ClientSession;

// SANTRAL UNSALT's last step, once no request can reach a sub-key any more (salt_fence.h):
// each sub-key in turn is taken with GETDEL and added onto the key with INCRBY (INCRBYFLOAT for
// a value that is not an integer), one after the other on this worker. The client's reply slot
// gets +OK when all are folded, or the error that stopped the fold.
//
// A GET meanwhile reads the key alone: it may see less than the true total (the sub-keys not
// folded yet, and a value between its GETDEL and its INCRBY), never more; once UNSALT has
// answered, it sees everything.
void fold_sub_keys(boost::intrusive_ptr<ClientSession> client, std::uint64_t slot,
                   SaltedCounter counter);

}  // namespace santral::router
