// The etcd client against a real etcd member (etcd-server 3.4's JSON gateway).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "router/cluster/etcd_client.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/free_port.h"
#include "tests/support/process.h"

using namespace santral;
using router::EtcdClient;

namespace {

// A relay in front of an etcd member that, once armed, passes the next request on but drops
// its answer and closes the client's connection: the member applied it, the client never heard.
class AnswerDropper {
 public:
  explicit AnswerDropper(int member_port) : member_port_(member_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) == 0);
    REQUIRE(::listen(listener_, 16) == 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~AnswerDropper() {
    ::shutdown(listener_, SHUT_RDWR);
    acceptor_.join();  // from here on, sockets_ and threads_ are this thread's
    for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
    for (auto& thread : threads_) thread.join();
    for (int fd : sockets_) ::close(fd);
    ::close(listener_);
  }
  AnswerDropper(const AnswerDropper&) = delete;
  AnswerDropper& operator=(const AnswerDropper&) = delete;
  int port() const { return port_; }
  void arm() { armed_ = true; }
  bool fired() const { return fired_; }

 private:
  void accept_loop() {
    for (;;) {
      int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      int member = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<std::uint16_t>(member_port_));
      ::connect(member, reinterpret_cast<sockaddr*>(&address), sizeof(address));
      sockets_.push_back(client);
      sockets_.push_back(member);
      threads_.emplace_back([client, member] { pump(client, member); });
      threads_.emplace_back([this, client, member] { answers(member, client); });
    }
  }
  static void pump(int from, int to) {
    char buffer[65536];
    for (ssize_t n; (n = ::read(from, buffer, sizeof buffer)) > 0;)
      if (::send(to, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) return;
  }
  void answers(int member, int client) {
    char buffer[65536];
    for (ssize_t n; (n = ::read(member, buffer, sizeof buffer)) > 0;) {
      if (armed_.exchange(false)) {
        fired_ = true;
        ::shutdown(client, SHUT_RDWR);  // the answer is dropped; the client sees its end close
        ::shutdown(member, SHUT_RDWR);
        return;
      }
      if (::send(client, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) return;
    }
  }

  int member_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> armed_{false};
  std::atomic<bool> fired_{false};
  std::thread acceptor_;
  std::vector<int> sockets_;  // touched by the accepting thread only, until it ends
  std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE("etcd client: range, put, compare-and-swap, transactions and leases") {
  test::EtcdCluster etcd(1);
  std::string member = "127.0.0.1:" + std::to_string(etcd.client_port(0));
  // A member that is not there comes first: the client moves on to the next.
  std::string dead = "127.0.0.1:" + std::to_string(test::free_loopback_port());
  EtcdClient client({dead, member}, std::chrono::milliseconds(1000));

  auto first = client.put("/t/a", "1");
  CHECK(client.member() == member);
  client.put("/t/b", "2");
  client.put("/u/c", "3");
  auto range = client.range("/t/", true);
  REQUIRE(range.kvs.size() == 2);
  CHECK(range.kvs[0].key == "/t/a");
  CHECK(range.kvs[0].value == "1");
  CHECK(range.kvs[0].mod_revision == first);
  CHECK(client.range("/t/a").kvs.size() == 1);
  CHECK(client.range("/none").kvs.empty());

  // Compare-and-swap: only on the revision it was read at; 0 means "does not exist".
  CHECK_FALSE(client.put_if("/t/a", "x", first - 1));
  auto swapped = client.put_if("/t/a", "x", first);
  REQUIRE(swapped);
  CHECK(client.range("/t/a").kvs[0].value == "x");
  CHECK_FALSE(client.put_if("/t/a", "y", 0));
  CHECK(client.put_if("/t/new", "y", 0));

  // A transaction: all or nothing.
  using Compare = EtcdClient::Compare;
  CHECK_FALSE(client.txn({{"/t/a", Compare::Target::Value, 0, "not x"}}, {{"/t/z", "z", 0}}, {}));
  CHECK(client.range("/t/z").kvs.empty());
  CHECK(client.txn({{"/t/a", Compare::Target::Value, 0, "x"}}, {{"/t/z", "z", 0}}, {"/t/b"}));
  CHECK(client.range("/t/z").kvs.size() == 1);
  CHECK(client.range("/t/b").kvs.empty());

  // A key on a lease goes with it.
  auto lease = client.grant_lease(std::chrono::seconds(5));
  CHECK(lease != 0);
  client.put("/t/leased", "v", lease);
  CHECK(client.keep_alive(lease));
  CHECK(client.range("/t/leased").kvs[0].lease == lease);
  client.revoke(lease);
  CHECK(client.range("/t/leased").kvs.empty());
  CHECK_FALSE(client.keep_alive(lease));
}

TEST_CASE("etcd client: calls share one kept connection; one the member closed is made again") {
  test::EtcdCluster etcd(1);
  test::FaultProxy proxy({{"etcd", etcd.client_port(0)}});
  EtcdClient client({"127.0.0.1:" + std::to_string(proxy.port("etcd"))},
                    std::chrono::milliseconds(1000));
  // The connections the member accepted, as the proxy in front of it counts them.
  auto accepted = [&] { return proxy.accepted("etcd"); };
  for (int i = 0; i < 30; ++i) client.put("/k/" + std::to_string(i), "v");
  CHECK(accepted() == 1);
  // Reset under it (an idle close, a member restarted): the next call makes a new one.
  proxy.command("KILL etcd");
  CHECK(client.range("/k/", true).kvs.size() == 30);
  CHECK(accepted() == 2);
}

TEST_CASE("etcd client: with no member answering, the error says what each said") {
  std::string dead = "127.0.0.1:" + std::to_string(test::free_loopback_port());
  EtcdClient client({dead}, std::chrono::milliseconds(500));
  try {
    client.range("/x");
    FAIL("no error");
  } catch (const router::EtcdUnavailable& e) {
    CHECK(std::string(e.what()).find(dead + ": ") == 0);
    CHECK(e.all_down());  // refused: etcd is down, not out of reach
  }
}

TEST_CASE("etcd client: members and whether each has a leader") {
  test::EtcdCluster etcd(3);
  auto member = [&](int i) { return "127.0.0.1:" + std::to_string(etcd.client_port(i)); };
  EtcdClient client({member(0)}, std::chrono::milliseconds(1000));
  auto members = client.member_list();
  CHECK(members.size() == 3);
  for (int i = 0; i < 3; ++i)
    CHECK(std::find(members.begin(), members.end(), member(i)) != members.end());
  // Member ids are 64-bit unsigned numbers, often past a signed one's range.
  REQUIRE(test::wait_until([&] { return client.leaderless(member(0)) == false; }, 5000));
  for (int i = 0; i < 3; ++i) CHECK(client.leaderless(member(i)) == false);
  etcd.kill(1);
  etcd.kill(2);
  // The one left alone loses its leader within an election timeout; the others answer nothing.
  CHECK(test::wait_until([&] { return client.leaderless(member(0)) == true; }, 5000));
  CHECK_FALSE(client.leaderless(member(1)).has_value());
}

TEST_CASE("etcd client: a txn applied whose answer was lost is made, not a failed compare") {
  test::EtcdCluster etcd(1);
  AnswerDropper relay(etcd.client_port(0));
  EtcdClient client({"127.0.0.1:" + std::to_string(relay.port())}, std::chrono::milliseconds(2000));
  auto first = client.put("/m/move", "planned");  // the connection is kept from here on
  using Compare = EtcdClient::Compare;
  relay.arm();
  // Applied by the member; the answer never comes and the kept connection closes, so the client
  // sends it again, and the second send's compare meets the first one's write.
  auto made = client.txn({{"/m/move", Compare::Target::ModRevision, first, {}}},
                         {{"/m/move", "moving", 0}}, {"/m/plan"});
  CHECK(relay.fired());
  REQUIRE(made.has_value());
  auto now = client.range("/m/move");
  REQUIRE(now.kvs.size() == 1);
  CHECK(now.kvs[0].value == "moving");
  CHECK(*made == now.kvs[0].mod_revision);
  // A compare that fails on its own, sent once, still fails.
  CHECK_FALSE(client.txn({{"/m/move", Compare::Target::ModRevision, first, {}}},
                         {{"/m/move", "moving", 0}}, {}));
}
