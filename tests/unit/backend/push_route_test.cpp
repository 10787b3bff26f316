// Where what a shard sends unasked goes (router/backend/push_route.h): pub/sub messages on a
// subscriber connection, RESP3 pushes on a tracking one, and who hears a lost connection.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "router/backend/push_route.h"

using namespace santral::router;

namespace {

class Pushes final : public ReplySink {
 public:
  void deliver(std::uint64_t slot, std::uint32_t shard, std::string_view reply) override {
    got.emplace_back(slot == kPushSlot ? shard : 999, std::string(reply));
  }
  void connection_lost(std::size_t shard) override { lost.push_back(shard); }
  std::vector<std::pair<std::uint32_t, std::string>> got;
  std::vector<std::size_t> lost;
};

const std::string kMessage = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n";
const std::string kPmessage = "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n";
const std::string kSmessage = ">3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n";
const std::string kInvalidate = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n";
const std::string kSubscribed = "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n";

}  // namespace

TEST_CASE("push route: a subscriber's messages are pushes, its confirmations replies") {
  PushRoute route(ConnectionRole::Subscriber);
  CHECK(route.unasked(kMessage));
  CHECK(route.unasked(kPmessage));
  CHECK(route.unasked(kSmessage));
  CHECK_FALSE(route.unasked(kSubscribed));
  CHECK_FALSE(route.unasked("+OK\r\n"));
  boost::intrusive_ptr<Pushes> sink(new Pushes);
  route.set_sink(sink);
  route.deliver(kMessage, 3);
  REQUIRE(sink->got.size() == 1);
  CHECK(sink->got[0] == std::pair<std::uint32_t, std::string>{3, kMessage});
  route.tracking_lost(3);  // not a tracking connection: nothing to forget
  CHECK(sink->lost.empty());
  route.lost(3);
  route.lost(3);  // heard once, then let go
  CHECK(sink->lost == std::vector<std::size_t>{3});
}

TEST_CASE("push route: elsewhere only a RESP3 push is unasked, an array always a reply") {
  PushRoute shared(ConnectionRole::Shared);
  CHECK_FALSE(shared.unasked(kMessage));  // an LRANGE may start with "message"
  CHECK(shared.unasked(kInvalidate));
  boost::intrusive_ptr<Pushes> sink(new Pushes);
  shared.set_sink(sink);
  shared.deliver(kInvalidate, 1);  // not a subscriber's nor a tracking connection's
  CHECK(sink->got.empty());
  PushRoute tracking(ConnectionRole::Tracking);
  tracking.set_sink(sink);
  tracking.deliver(kInvalidate, 2);
  CHECK(sink->got.size() == 1);
  tracking.tracking_lost(2);
  tracking.tracking_lost(2);  // every connection it loses
  CHECK(sink->lost == std::vector<std::size_t>{2, 2});
}
