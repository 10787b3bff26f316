// router/session/reply_queue.cpp: a client's replies leave in request order, whatever order
// the shards answer in (CONVENTIONS: replies to split commands arrive out of order in tests).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "protocol/command_table.h"
#include "router/merge/merge_brief.h"
#include "router/session/reply_queue.h"

using santral::router::make_merge;
using santral::router::MergeBrief;
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

// A request told apart by its start time: request n started n seconds after the epoch.
ReplyQueue::Request request(int n) {
  ReplyQueue::Request request;
  request.start = std::chrono::steady_clock::time_point(std::chrono::seconds(n));
  return request;
}

int number_of(const ReplyQueue::Request& r) {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(r.start.time_since_epoch()).count());
}

// Drains `q` into `out`; returns the requests that left, as (number, is_error).
std::vector<std::pair<int, bool>> drain(ReplyQueue& q, std::string& out) {
  std::vector<std::pair<int, bool>> left;
  q.drain(out, [&](const ReplyQueue::Request& r, bool error) {
    left.emplace_back(number_of(r), error);
  });
  return left;
}

using Left = std::vector<std::pair<int, bool>>;

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

TEST_CASE("slot 2, then 1, then 0: nothing leaves before the head, then all three in order") {
  ReplyQueue q;
  auto s0 = q.open(1, nullptr, request(0));
  auto s1 = q.open(1, nullptr, request(1));
  auto s2 = q.open(1, nullptr, request(2));
  std::string out;
  CHECK(q.fill(s2, 0, "+two\r\n"));
  CHECK(drain(q, out).empty());
  CHECK(q.fill(s1, 0, "-ERR one\r\n"));
  CHECK(drain(q, out).empty());
  CHECK(out.empty());
  CHECK(q.size() == 3);
  CHECK(q.head_id() == s0);
  CHECK(q.is_simple_head(s0));  // still waiting: its reply may go straight out
  CHECK(q.fill(s0, 0, "+zero\r\n"));
  CHECK_FALSE(q.is_simple_head(s0));  // filled: it leaves through drain
  // Each leaves once, in request order, an error reported as one.
  CHECK(drain(q, out) == Left{{0, false}, {1, true}, {2, false}});
  CHECK(out == "+zero\r\n-ERR one\r\n+two\r\n");
  CHECK(q.empty());
  CHECK(q.head_id() == s2 + 1);
  CHECK(q.open() == s2 + 1);  // ids keep counting
}

TEST_CASE("a head that arrives late releases only the complete slots behind it") {
  ReplyQueue q;
  auto s0 = q.open(1, nullptr, request(0));
  auto s1 = q.open(1, nullptr, request(1));
  auto s2 = q.open(1, nullptr, request(2));
  auto s3 = q.open(1, nullptr, request(3));
  std::string out;
  q.fill(s3, 0, "D");
  q.fill(s1, 0, "B");
  q.fill(s0, 0, "A");
  CHECK(drain(q, out) == Left{{0, false}, {1, false}});
  CHECK(out == "AB");
  CHECK(q.head_id() == s2);
  CHECK(q.is_simple_head(s2));
  q.fill(s2, 0, "C");
  CHECK(drain(q, out) == Left{{2, false}, {3, false}});
  CHECK(out == "ABCD");
}

TEST_CASE("an MGET split over two shards: shard 1 answers before shard 0, around other replies") {
  // GET x; MGET k0 k1 k2 (k0, k2 on shard 0; k1 on shard 1); GET y.
  MergeBrief brief;
  brief.kind = santral::protocol::Merge::Ordered;
  brief.command = "MGET";
  brief.fragment_names = {"shard0", "shard1"};
  brief.positions = {{0, 0}, {1, 0}, {0, 1}};
  ReplyQueue q;
  auto get_x = q.open(1, nullptr, request(0));
  auto mget = q.open(2, make_merge(brief), request(1));
  auto get_y = q.open(1, nullptr, request(2));
  CHECK_FALSE(q.is_simple_head(mget));
  std::string out;

  CHECK(q.fill(get_y, 0, "$1\r\ny\r\n"));
  CHECK_FALSE(q.fill(mget, 1, "*1\r\n$2\r\nv1\r\n"));  // shard 1 first: not complete yet
  CHECK(q.fill(get_x, 0, "$1\r\nx\r\n"));
  CHECK(drain(q, out) == Left{{0, false}});  // the MGET waits for shard 0; GET y behind it
  CHECK(out == "$1\r\nx\r\n");
  CHECK(q.head_id() == mget);
  CHECK_FALSE(q.is_simple_head(mget));

  CHECK(q.fill(mget, 0, "*2\r\n$2\r\nv0\r\n$-1\r\n"));
  CHECK(drain(q, out) == Left{{1, false}, {2, false}});
  CHECK(out == "$1\r\nx\r\n*3\r\n$2\r\nv0\r\n$2\r\nv1\r\n$-1\r\n$1\r\ny\r\n");
  CHECK(q.empty());
}

TEST_CASE("a split reply's fragments in every order give one reply, in its place") {
  std::vector<std::uint32_t> order = {0, 1, 2};
  do {
    INFO("fragments in order " << order[0] << order[1] << order[2]);
    ReplyQueue q;
    auto before = q.open(1, nullptr, request(0));
    auto split = q.open(3, std::make_unique<JoinMerge>(3), request(1));
    auto after = q.open(1, nullptr, request(2));
    std::string out;
    q.fill(after, 0, "|after");
    for (std::size_t i = 0; i < order.size(); ++i) {
      CHECK(q.fill(split, order[i], "f" + std::to_string(order[i])) == (i + 1 == order.size()));
      CHECK(drain(q, out).empty());  // `before` has not answered
    }
    q.fill(before, 0, "before|");
    CHECK(drain(q, out) == Left{{0, false}, {1, false}, {2, false}});
    CHECK(out == "before|f0f1f2|after");
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE("an error known at once completes a split slot; its late fragments are ignored") {
  ReplyQueue q;
  auto head = q.open(1, nullptr, request(0));
  auto split = q.open(2, std::make_unique<JoinMerge>(2), request(1));
  CHECK_FALSE(q.fill(split, 1, "late?"));
  q.complete(split, "-ERR santral: timed out\r\n");  // e.g. a shard that did not answer in time
  CHECK_FALSE(q.fill(split, 0, "too late"));         // the slot is complete already
  std::string out;
  CHECK(drain(q, out).empty());
  q.complete(head, "+OK\r\n");
  CHECK(drain(q, out) == Left{{0, false}, {1, true}});
  CHECK(out == "+OK\r\n-ERR santral: timed out\r\n");
  CHECK_FALSE(q.fill(split, 0, "after it left"));
  CHECK(out == "+OK\r\n-ERR santral: timed out\r\n");
}

TEST_CASE("a silenced reply keeps its place and is still reported; RESP3 blob errors are errors") {
  ReplyQueue q;
  auto s0 = q.open(1, nullptr, request(0));
  auto s1 = q.open(1, nullptr, request(1));
  auto s2 = q.open(1, nullptr, request(2));
  q.silence(s1);
  CHECK_FALSE(q.is_simple_head(s1));
  q.fill(s2, 0, "!5\r\nERR x\r\n");
  q.fill(s1, 0, "-ERR not for the client\r\n");
  std::string out;
  CHECK(drain(q, out).empty());
  q.fill(s0, 0, ":1\r\n");
  CHECK(drain(q, out) == Left{{0, false}, {1, true}, {2, true}});
  CHECK(out == ":1\r\n!5\r\nERR x\r\n");
}

TEST_CASE("500 requests answered in a random order leave in request order") {
  std::mt19937 rng(1010);
  for (int round = 0; round < 20; ++round) {
    ReplyQueue q;
    const int n = 500;
    std::vector<std::uint64_t> ids;
    std::vector<int> fragments(n);
    std::string want;
    for (int i = 0; i < n; ++i) {
      fragments[i] = i % 7 == 3 ? 3 : 1;  // some split over three shards
      ids.push_back(fragments[i] == 1 ? q.open(1, nullptr, request(i))
                                      : q.open(3, std::make_unique<JoinMerge>(3), request(i)));
      for (int f = 0; f < fragments[i]; ++f)
        want += std::to_string(i) + "." + std::to_string(f) + ";";
    }
    // Every fragment of every request, delivered in a random order.
    std::vector<std::pair<int, int>> arrivals;
    for (int i = 0; i < n; ++i)
      for (int f = 0; f < fragments[i]; ++f) arrivals.emplace_back(i, f);
    std::shuffle(arrivals.begin(), arrivals.end(), rng);

    std::vector<int> missing = fragments;  // fragments still to come, per request
    std::string out;
    int next = 0;  // the first request whose reply has not left
    for (auto [i, f] : arrivals) {
      q.fill(ids[i], static_cast<std::uint32_t>(f),
             std::to_string(i) + "." + std::to_string(f) + ";");
      --missing[i];
      auto left = drain(q, out);
      // Exactly the complete requests at the head leave, in order.
      int expected_next = next;
      while (expected_next < n && missing[expected_next] == 0) ++expected_next;
      REQUIRE(static_cast<int>(left.size()) == expected_next - next);
      for (std::size_t k = 0; k < left.size(); ++k)
        REQUIRE(left[k].first == next + static_cast<int>(k));
      next = expected_next;
      REQUIRE(want.starts_with(out));
    }
    REQUIRE(q.empty());
    REQUIRE(out == want);
  }
}
