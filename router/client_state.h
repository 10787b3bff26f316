#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace santral::router {

// What Santral remembers about one client connection between its requests.
struct ClientState {
  std::uint64_t id = 0;
  std::string name;  // CLIENT SETNAME
  std::string peer;  // "ip:port"
  std::string user = "default";
  bool authenticated = false;
  int protocol = 2;  // RESP version chosen with HELLO
  std::chrono::system_clock::time_point connected_at = std::chrono::system_clock::now();
};

}  // namespace santral::router
