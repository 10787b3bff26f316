#pragma once

#include <string>

namespace santral::router {

// A client's TLS handshake failed (often: plain RESP sent to the TLS port). Logged at most once
// a second for the whole process, with how many failed since, so a flood cannot fill the log.
void handshake_failed(const std::string& peer, const std::string& why);

}  // namespace santral::router
