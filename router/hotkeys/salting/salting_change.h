#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "router/hotkeys/salting/salt_table.h"
#include "router/hotkeys/salting/unsalt_fold.h"

namespace santral::router {

class WorkerServices;

// Salting and unsalting a key, the same way for SANTRAL SALT/UNSALT and automatic salting;
// both run on `worker`'s thread.

// Salts `key` on every worker (this one at once, so its next request already sees it) and
// logs it, `why` saying who asked. Nothing happens when the key is already salted, or when
// `salting` is automatic and the key has any run-time salting change (an operator's UNSALT
// stands). Returns "", or the error to answer when a router alone could not first keep the
// key in hotkeys.state_file (the key then stays unsalted).
std::string salt_key(WorkerServices& worker, std::string_view key, SaltOverrides::Salting salting,
                     std::string_view why);

// Unsalts `key`: stops every worker routing to its sub-keys, waits out what was already sent
// to them (salting_barrier.h), then folds them back into the key (unsalt_fold.h); once folded it
// leaves hotkeys.state_file. Logs it. False when the key is not salted, or `only_auto` and it
// was not salted automatically.
bool unsalt_key(WorkerServices& worker, std::string_view key, bool only_auto, std::string_view why,
                UnsaltFoldTarget target);

// The keys salted at run time (by SANTRAL SALT or automatically; only the automatic ones when
// `only_auto`), from the changes every worker shares.
std::vector<std::string> run_time_salted_keys(WorkerServices& worker, bool only_auto);

}  // namespace santral::router
