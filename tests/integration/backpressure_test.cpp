// A client that sends faster than a shard answers cannot grow Santral's memory without bound:
// past limits.max_pending_requests Santral stops reading it, and TCP pushes back.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/support/cluster.h"

using namespace santral::test;

namespace {

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace

TEST_CASE("a flood of requests to a hung shard stops being read; memory stays bounded") {
  Cluster cluster(1,
                  "timeouts:\n  request_ms: 60000\n"
                  "limits:\n  max_pending_requests: 64\n");
  std::string value(1000, 'v');
  {
    auto client = cluster.client();
    REQUIRE(client.command({"SET", "k", value}).is_ok());
  }
  long before = rss_kib(cluster.santral().process().pid());
  cluster.shard(0).pause();

  RawConnection raw(cluster.santral().port());
  // A SET with a 1 KB value, sent until the kernel will take no more.
  std::string request = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000\r\n" + value + "\r\n";
  std::string burst;
  for (int i = 0; i < 64; ++i) burst += request;
  std::size_t sent = 0;
  int stalls = 0;
  while (stalls < 20 && sent < 400u * 1024 * 1024) {
    ssize_t n = ::send(raw.fd(), burst.data(), burst.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      stalls = 0;
    } else {
      ++stalls;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  long during = rss_kib(cluster.santral().process().pid());
  INFO("sent " << sent << " bytes; RSS " << before << " -> " << during << " KiB");
  CHECK(sent < 64u * 1024 * 1024);  // the socket buffers, not Santral, hold the rest
  CHECK(during - before < 32 * 1024);
  cluster.shard(0).resume();
}
