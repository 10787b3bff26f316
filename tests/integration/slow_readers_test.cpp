// A client that reads its replies late, or leaves without reading them: Santral writes what
// the client's socket takes, keeps the rest until the socket has room again (its readiness
// loop says when), serves every other client meanwhile, and lets go of a client that left.
#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/process.h"

using namespace santral::test;

namespace {

// CLIENT LIST's omem (output Santral holds for the client) of the client on `port`; nullopt
// when no such client is listed.
std::optional<long> output_held(Cluster& cluster, int port) {
  auto list = cluster.client().command({"CLIENT", "LIST"});
  std::istringstream lines(list.str);
  std::string line;
  std::string addr = "addr=127.0.0.1:" + std::to_string(port) + " ";
  while (std::getline(lines, line)) {
    auto mem = line.find(" omem=");
    if (line.find(addr) == std::string::npos || mem == std::string::npos) continue;
    return std::stol(line.substr(mem + 6));
  }
  return std::nullopt;
}

// Four values of 256 KiB, each different all along, on the cluster's shards.
std::vector<std::string> big_values(Cluster& cluster) {
  std::vector<std::string> values;
  auto client = cluster.client();
  for (int v = 0; v < 4; ++v) {
    std::string value(256 * 1024, ' ');
    for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>('a' + (i + v) % 26);
    REQUIRE(client.command({"SET", "big:" + std::to_string(v), value}).is_ok());
    values.push_back(std::move(value));
  }
  return values;
}

std::string get_request(int v) {
  return "*2\r\n$3\r\nGET\r\n$5\r\nbig:" + std::to_string(v) + "\r\n";
}

// 40 MiB of replies: more than the kernel's socket buffers on both ends hold (tcp_wmem's and
// tcp_rmem's largest are 4 and 6 MiB by default).
constexpr int kGets = 160;

}  // namespace

TEST_CASE("a client that reads late gets every reply byte for byte, and others go on meanwhile") {
  Cluster cluster(2);
  auto values = big_values(cluster);
  RawConnection late(cluster.santral().port());
  std::string pipeline;
  std::string expected;
  for (int i = 0; i < kGets; ++i) {
    pipeline += get_request(i % 4);
    expected += "$" + std::to_string(values[i % 4].size()) + "\r\n" + values[i % 4] + "\r\n";
  }
  late.send(pipeline);
  // The socket took what it could; Santral holds the rest for it.
  int port = late.local_port();
  REQUIRE(wait_until([&] { return output_held(cluster, port).value_or(0) > 0; }, 10000));
  auto other = cluster.client();
  CHECK(other.command({"GET", "big:1"}).str == values[1]);
  CHECK(other.command({"SET", "small", "1"}).is_ok());

  auto received = late.read_some(expected.size(), 60000);
  REQUIRE(received.size() == expected.size());
  CHECK(received == expected);
  CHECK(output_held(cluster, port) == 0L);
}

TEST_CASE("a client that leaves with replies unread is let go, and its connection closed") {
  Cluster cluster(2);
  auto values = big_values(cluster);
  int port = 0;
  {
    RawConnection gone(cluster.santral().port());
    port = gone.local_port();
    std::string pipeline;
    for (int i = 0; i < kGets; ++i) pipeline += get_request(i % 4);
    gone.send(pipeline);
    REQUIRE(wait_until([&] { return output_held(cluster, port).value_or(0) > 0; }, 10000));
  }  // closed with megabytes unread: the next write fails (or the hang-up comes) and ends it
  CHECK(wait_until([&] { return !output_held(cluster, port).has_value(); }, 10000));
  auto client = cluster.client();
  CHECK(client.command({"GET", "big:2"}).str == values[2]);
}
