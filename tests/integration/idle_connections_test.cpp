// An idle client connection holds no read buffer: after a second without input Santral gives
// the buffer back to its worker and waits for readability without one (CLIENT LIST shows
// qbuf-free=0, as Redis does for a client whose query buffer it freed). A parked connection must
// wake up for anything: a single request, a long pipeline, a request that was half-sent when the
// sweep came.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/process.h"

using namespace santral::test;

namespace {

// qbuf-free (the read buffer's free bytes) of each client in CLIENT LIST, by its port.
std::map<int, long> buffer_by_port(Cluster& cluster) {
  auto client = cluster.client();
  auto list = client.command({"CLIENT", "LIST"});
  std::map<int, long> free_bytes;
  std::istringstream lines(list.str);
  std::string line;
  while (std::getline(lines, line)) {
    auto addr = line.find("addr=127.0.0.1:");
    auto mem = line.find("qbuf-free=");
    if (addr == std::string::npos || mem == std::string::npos) continue;
    free_bytes[std::stoi(line.substr(addr + 15))] = std::stol(line.substr(mem + 10));
  }
  return free_bytes;
}

bool parked(Cluster& cluster, const std::vector<int>& ports) {
  auto free_bytes = buffer_by_port(cluster);
  for (int port : ports) {
    auto it = free_bytes.find(port);
    if (it == free_bytes.end() || it->second != 0) return false;
  }
  return true;
}

// A GET of a key nobody set: its answer comes from a shard, so the connection still reads into
// its buffer when the answer leaves, and only the sweep parks it (a PING, answered by Santral
// itself, leaves the connection owing nothing: it parks at once).
constexpr std::string_view kGetMissing = "*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n";
constexpr std::string_view kNil = "$-1\r\n";

std::string set_request(const std::string& key, const std::string& value) {
  return "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
         std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

}  // namespace

TEST_CASE("idle connections give back their read buffers, and wake up for the next request") {
  Cluster cluster(2);
  constexpr int kClients = 200;
  std::vector<std::unique_ptr<RawConnection>> clients;
  std::vector<int> ports;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<RawConnection>(cluster.santral().port()));
    clients.back()->send(kGetMissing);
    REQUIRE(clients.back()->read_some(kNil.size()) == kNil);
    ports.push_back(clients.back()->local_port());
  }
  // Right after its answer a connection still reads into its buffer; within about two sweeps
  // (one a second) every one has given it back.
  CHECK_FALSE(parked(cluster, ports));
  REQUIRE(wait_until([&] { return parked(cluster, ports); }, 10000));

  for (int i = 0; i < kClients; ++i) {
    std::string key = "idle:" + std::to_string(i);
    clients[i]->send(set_request(key, "v" + std::to_string(i)) + "*2\r\n$3\r\nGET\r\n$" +
                     std::to_string(key.size()) + "\r\n" + key + "\r\n");
  }
  for (int i = 0; i < kClients; ++i) {
    std::string value = "v" + std::to_string(i);
    std::string expected = "+OK\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
    CHECK(clients[i]->read_some(expected.size()) == expected);
  }
  long long stored = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s)
    stored += cluster.shard(s).client().command({"DBSIZE"}).integer;
  CHECK(stored == kClients);
}

TEST_CASE("a connection Santral answered itself gives its buffer back at once, not a sweep later") {
  Cluster cluster(1);
  RawConnection raw(cluster.santral().port());
  raw.send("*1\r\n$4\r\nPING\r\n");
  REQUIRE(raw.read_some(7) == "+PONG\r\n");
  // A sweep parks only a connection that read nothing since the sweep before: one that just
  // read its PING would keep its buffer for a second or two.
  CHECK(parked(cluster, {raw.local_port()}));
  raw.send(kGetMissing);
  CHECK(raw.read_some(kNil.size()) == kNil);
}

TEST_CASE("a parked connection reads a long pipeline whole and answers it in order") {
  Cluster cluster(2);
  RawConnection raw(cluster.santral().port());
  raw.send(kGetMissing);
  REQUIRE(raw.read_some(kNil.size()) == kNil);
  REQUIRE(wait_until([&] { return parked(cluster, {raw.local_port()}); }, 10000));

  constexpr int kIncrs = 5000;  // about 150 KB: many times the first read buffer
  std::string pipeline;
  for (int i = 0; i < kIncrs; ++i) pipeline += "*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n";
  raw.send(pipeline);
  std::string expected;
  for (int i = 1; i <= kIncrs; ++i) expected += ":" + std::to_string(i) + "\r\n";
  CHECK(raw.read_some(expected.size(), 20000) == expected);
  auto owner = cluster.owner("counter");
  CHECK(cluster.shard(owner).client().command({"GET", "counter"}).str == std::to_string(kIncrs));
}

TEST_CASE("a request half-sent when the idle sweep comes is finished, not lost") {
  Cluster cluster(1);
  RawConnection half(cluster.santral().port());
  std::string request = set_request("half", "sent-in-two-parts");
  half.send(request.substr(0, 20));
  // A second connection that goes idle after the first was cut off: once the sweep has parked
  // it, the sweep has also passed the first one after a whole quiet period.
  RawConnection witness(cluster.santral().port());
  witness.send(kGetMissing);
  REQUIRE(witness.read_some(kNil.size()) == kNil);
  REQUIRE(wait_until([&] { return parked(cluster, {witness.local_port()}); }, 10000));
  // The half-sent connection kept its buffer: it holds part of a request.
  auto buffers = buffer_by_port(cluster);
  CHECK(buffers.at(half.local_port()) > 0);

  half.send(request.substr(20));
  CHECK(half.read_some(5) == "+OK\r\n");
  CHECK(cluster.shard(0).client().command({"GET", "half"}).str == "sent-in-two-parts");
}
