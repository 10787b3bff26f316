#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"

namespace santral::router {

// Asks another router of the fleet, on `io` (the server's loop or a worker's; no thread of its
// own): connects, sends `requests` (whole RESP commands; an AUTH may come first) back to back,
// reads as many replies, and calls `done` once with the last reply's frame, or with why there is
// none
// ("" frame): it could not connect, the connection was lost, the reply was not RESP, or not all
// replies were in within `timeout`.
using RouterAnswer = std::function<void(std::string frame, std::string error)>;
void call_router(boost::asio::io_context& io, const config::Endpoint& router,
                 std::vector<std::string> requests, std::chrono::milliseconds timeout,
                 RouterAnswer done);

}  // namespace santral::router
