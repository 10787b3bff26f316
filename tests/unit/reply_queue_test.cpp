#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "router/session/reply_queue.h"

using santral::router::ReplyMerge;
using santral::router::ReplyQueue;

namespace {

// Joins fragments in fragment order, whatever order they arrive in.
class JoinMerge : public ReplyMerge {
 public:
  explicit JoinMerge(std::size_t parts) : parts_(parts) {}
  void add(std::uint32_t fragment, std::string_view reply) override { parts_[fragment] = reply; }
  void finish(std::string& out) override {
    for (auto& p : parts_) out += p;
  }

 private:
  std::vector<std::string> parts_;
};

}  // namespace

TEST_CASE("replies leave in request order whatever order they arrive in") {
  ReplyQueue q;
  auto a = q.open();
  auto b = q.open();
  auto c = q.open();
  std::string out;
  CHECK(q.fill(c, 0, "C"));
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out.empty());  // a and b are still missing
  CHECK(q.fill(b, 0, "B"));
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out.empty());
  CHECK(q.fill(a, 0, "A"));
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out == "ABC");
  CHECK(q.empty());
}

TEST_CASE("the head's reply may skip the slot buffer") {
  ReplyQueue q;
  auto a = q.open();
  auto b = q.open();
  CHECK(q.is_simple_head(a));
  CHECK_FALSE(q.is_simple_head(b));
  q.pop_head();
  CHECK(q.is_simple_head(b));
}

TEST_CASE("split replies complete when the last fragment arrives") {
  ReplyQueue q;
  auto a = q.open(3, std::make_unique<JoinMerge>(3));
  auto b = q.open();
  CHECK_FALSE(q.is_simple_head(a));
  q.fill(b, 0, "|b");
  CHECK_FALSE(q.fill(a, 2, "z"));
  CHECK_FALSE(q.fill(a, 0, "x"));
  std::string out;
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out.empty());
  CHECK(q.fill(a, 1, "y"));
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out == "xyz|b");
}

TEST_CASE("a silenced slot keeps its place but writes nothing") {
  ReplyQueue q;
  auto a = q.open();
  auto b = q.open();
  q.silence(a);
  q.fill(b, 0, "B");
  std::string out;
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out.empty());
  q.fill(a, 0, "A");
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out == "B");
}

TEST_CASE("replies for unknown or finished slots are ignored") {
  ReplyQueue q;
  auto a = q.open();
  CHECK(q.fill(a, 0, "A"));
  CHECK_FALSE(q.fill(a, 0, "again"));
  CHECK_FALSE(q.fill(a + 5, 0, "x"));
  std::string out;
  q.drain(out, [](const ReplyQueue::Request&, bool) {});
  CHECK(out == "A");
}
