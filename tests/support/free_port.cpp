#include "tests/support/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <random>
#include <set>
#include <stdexcept>

namespace santral::test {

namespace {

// Whether nothing listens on 127.0.0.1:port now.
bool bindable(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return free;
}

}  // namespace

// Below the kernel's ephemeral range (32768-60999 here): a port the kernel hands out to an
// outgoing connection (a client's, etcd's to its peers) meanwhile cannot be taken before the
// process the test starts binds it. Chosen at random, never twice in one test process.
int free_loopback_port() {
  static std::mutex lock;
  static std::set<int> given;
  static std::mt19937 random(std::random_device{}());
  std::lock_guard guard(lock);
  std::uniform_int_distribution<int> pick(20000, 32000);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    int port = pick(random);
    if (given.contains(port) || !bindable(port)) continue;
    given.insert(port);
    return port;
  }
  throw std::runtime_error("could not find a free loopback port");
}

}  // namespace santral::test
