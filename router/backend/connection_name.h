#pragma once

#include <string>

namespace santral::router {

// Every connection this process opens to a shard names itself there (CLIENT SETNAME in its
// handshake) "santral:<router>:<run>": <router> says which router it is (cluster.router in a
// fleet, else this host's name and the client listen address), <run> this start of it. So a
// router that starts again can end, on the shards, the connections an earlier run of it left
// behind, whose requests a stalled shard may still run (earlier_runs.h).
// Set once at start, before any connection opens; "" leaves connections unnamed.
void name_connections(const std::string& router);
const std::string& connection_name();
// "santral:<router>:", what every run of this router's names start with.
const std::string& connection_name_prefix();

}  // namespace santral::router
