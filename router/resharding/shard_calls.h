#pragma once

#include <functional>
#include <string>
#include <vector>

#include "router/backend/backend_connection.h"

namespace santral::router {

// The control plane's way of asking a shard a few things: `requests` (complete RESP bytes)
// go down `connection` back to back, and `done` gets their replies (whole RESP frames), in
// order, once all are in. A failed request's reply is the error Santral made for it.
using ShardReplies = std::function<void(std::vector<std::string> replies)>;
void call_shard(BackendConnection& connection, const std::vector<std::string>& requests,
                ShardReplies done);

// One request's bytes.
std::string command_bytes(std::initializer_list<std::string_view> args);
std::string command_bytes(const std::vector<std::string>& args);

}  // namespace santral::router
