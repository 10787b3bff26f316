// How a shard connection writes (router/backend/shard_writer.h), on a loopback socket whose
// reader is slow: a batch larger than the socket takes goes out in bounded writes, in order,
// and the fleet's write fence stops what is left of it once the router is past its lease.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "router/backend/lease_clock.h"
#include "router/backend/shard_writer.h"
#include "router/backend/write_fence.h"

using namespace santral::router;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// The connection's side: counts what the writer tells it.
struct Connection : ShardWriter::Owner {
  void hold() override { ++holds; }
  void let_go() override { --holds; }
  bool writable() const override { return up; }
  void top_up() override { ++top_ups; }
  void writing() override { ++writes; }
  void write_failed(const std::string& why, bool counts_as_failure) override {
    failures.push_back(why);
    counted = counts_as_failure;
  }

  bool up = true;
  int holds = 0;
  int top_ups = 0;
  int writes = 0;
  std::vector<std::string> failures;
  bool counted = false;
};

// A writer on one end of a loopback TCP connection, the test reading the other end.
struct Wire {
  Wire() : stream(tcp::socket(io)), peer(io) {
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    stream.socket().connect(acceptor.local_endpoint());
    acceptor.accept(peer);
    // Small buffers: the socket is full long before the batch is out.
    stream.socket().set_option(asio::socket_base::send_buffer_size(16 * 1024));
    peer.set_option(asio::socket_base::receive_buffer_size(16 * 1024));
  }
  // Reads what has arrived (without waiting), and lets the writer run.
  void read_some() {
    char buffer[64 * 1024];
    boost::system::error_code ec;
    peer.non_blocking(true);
    std::size_t bytes = peer.read_some(asio::buffer(buffer), ec);
    if (!ec) received.append(buffer, bytes);
    io.poll();
  }

  asio::io_context io;
  Stream stream;
  tcp::socket peer;
  Connection connection;
  ConnectionFence fence;
  ShardWriter writer{io, stream, fence, connection};
  std::string received;
};

std::string batch(std::size_t size) {
  std::string bytes;
  for (std::size_t i = 0; bytes.size() < size; ++i) bytes += std::to_string(i) + ",";
  return bytes;
}

struct FenceGuard {
  ~FenceGuard() { set_write_fence(nullptr); }
};

}  // namespace

TEST_CASE("shard writer: a batch larger than the socket takes goes out whole, in order") {
  Wire wire;
  auto sent = batch(3 * ShardWriter::kMaxWrite);
  wire.writer.outbox() = sent;
  wire.writer.schedule();
  wire.writer.schedule();  // one write per event-loop turn, however often asked
  CHECK(wire.connection.holds == 1);
  wire.io.poll();
  CHECK(wire.received.empty());
  CHECK(wire.connection.holds == 1);  // waiting for the socket to take more
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (wire.received.size() < sent.size() && std::chrono::steady_clock::now() < deadline)
    wire.read_some();
  REQUIRE(wire.received.size() == sent.size());
  CHECK(wire.received == sent);
  // Several writes: the socket was full between them, and each is kMaxWrite at most.
  CHECK(wire.connection.writes > 3);
  CHECK(wire.connection.failures.empty());
  CHECK(wire.connection.top_ups >= 1);
  wire.io.poll();
  CHECK(wire.connection.holds == 0);
  CHECK(wire.writer.outbox().empty());
}

TEST_CASE("shard writer: the write fence stops the rest of a batch once past the lease") {
  FenceGuard guard;
  std::atomic<std::int64_t> serve_until{lease_clock_ns(60s)};
  set_write_fence(&serve_until);
  Wire wire;
  auto sent = batch(3 * ShardWriter::kMaxWrite);
  wire.writer.outbox() = sent;
  wire.writer.flush();
  REQUIRE(wire.connection.holds == 1);         // the socket is full: the rest waits for it
  serve_until = lease_clock_ns() - 5'000'000;  // the lease ran out meanwhile
  auto deadline = std::chrono::steady_clock::now() + 2s;
  while (wire.connection.failures.empty() && std::chrono::steady_clock::now() < deadline)
    wire.read_some();
  REQUIRE(wire.connection.failures.size() == 1);
  CHECK(wire.connection.failures[0].find("has not confirmed its fleet lease") != std::string::npos);
  CHECK_FALSE(wire.connection.counted);  // the router's own doing, not the shard's failure
  for (int i = 0; i < 20; ++i) wire.read_some();
  CHECK(wire.received.size() < sent.size());
  CHECK(sent.compare(0, wire.received.size(), wire.received) == 0);

  // Nothing at all is written past the lease, and an unfenced connection (the one that sends
  // proofs) still writes.
  Wire fenced;
  fenced.writer.outbox() = "PING";
  fenced.writer.flush();
  CHECK(fenced.connection.writes == 0);
  CHECK(fenced.connection.failures.size() == 1);
  Wire unfenced;
  unfenced.fence.set_fenced(false);
  unfenced.writer.outbox() = "PING";
  unfenced.writer.flush();
  unfenced.read_some();
  CHECK(unfenced.received == "PING");
}

TEST_CASE("shard writer: after reset, a write that waited does nothing and lets go") {
  Wire wire;
  wire.writer.outbox() = batch(3 * ShardWriter::kMaxWrite);
  wire.writer.flush();
  REQUIRE(wire.connection.holds == 1);
  auto writes = wire.connection.writes;
  wire.writer.reset();
  wire.stream.socket().close();
  wire.io.poll();
  CHECK(wire.connection.holds == 0);
  CHECK(wire.connection.writes == writes);
  CHECK(wire.connection.failures.empty());
  // A connection that is not up writes nothing.
  Wire down;
  down.connection.up = false;
  down.writer.outbox() = "PING";
  down.writer.flush();
  CHECK(down.connection.writes == 0);
  CHECK(down.writer.outbox() == "PING");
}
