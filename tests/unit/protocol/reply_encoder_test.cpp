#include "protocol/reply_encoder.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace santral::protocol;
using namespace std::string_literals;

namespace {

std::string round_trip(std::string_view frame) {
  ReplyValue value;
  INFO("frame " << frame);
  REQUIRE(parse_reply(frame, value));
  std::string out;
  encode_reply(value, out);
  return out;
}

// A random reply of any type, nested up to `depth` levels.
std::string random_frame(std::mt19937& rng, int depth) {
  const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const auto text = [&] {
    std::string t;
    const int size = pick(12);
    for (int i = 0; i < size; ++i) t.push_back("ab:\r\n\0xyz -"[pick(11)]);
    return t;
  };
  const auto blob = [&](char type, std::string payload) {
    return type + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
  };
  const int kind = pick(depth > 0 ? 18 : 13);
  switch (kind) {
    case 0:
      return "+OK\r\n";
    case 1:
      return "-ERR " + std::to_string(pick(1000)) + "\r\n";
    case 2:
      return ":" + std::to_string(static_cast<std::int64_t>(rng()) - 2147483648LL) + "\r\n";
    case 3:
      return blob('$', text());
    case 4:
      return "$-1\r\n";
    case 5:
      return "*-1\r\n";
    case 6:
      return "_\r\n";
    case 7:
      return ",-" + std::to_string(pick(100)) + ".5e3\r\n";
    case 8:
      return pick(2) ? "#t\r\n" : "#f\r\n";
    case 9:
      return blob('!', "ERR " + text());
    case 10:
      return blob('=', "txt:" + text());
    case 11:
      return "(" + std::to_string(rng()) + std::to_string(rng()) + "\r\n";
    case 12:
      return blob('$', "");
    default: {
      static constexpr char kAggregates[] = "*~>%*";
      const char type = kAggregates[kind - 13];
      const int count = pick(4);
      std::string frame = type + std::to_string(count) + "\r\n";
      const int elements = type == '%' ? count * 2 : count;
      for (int i = 0; i < elements; ++i) frame += random_frame(rng, depth - 1);
      return frame;
    }
  }
}

}  // namespace

TEST_CASE("RESP2 values are written back byte for byte") {
  for (const std::string& frame : {
           "+OK\r\n"s,
           "+\r\n"s,
           "+Background saving started\r\n"s,
           "-ERR unknown command\r\n"s,
           "-WRONGTYPE Operation against a key\r\n"s,
           ":0\r\n"s,
           ":-42\r\n"s,
           ":9223372036854775807\r\n"s,
           ":-9223372036854775808\r\n"s,
           "$0\r\n\r\n"s,
           "$5\r\nhello\r\n"s,
           "$7\r\nhe\r\nl\0o\r\n"s,
           "$-1\r\n"s,
           "*-1\r\n"s,
           "*0\r\n"s,
           "*3\r\n$1\r\na\r\n$-1\r\n:7\r\n"s,
           "*2\r\n*2\r\n+a\r\n*0\r\n*1\r\n*-1\r\n"s,
       }) {
    CHECK(round_trip(frame) == frame);
  }
}

TEST_CASE("RESP3 values keep their own types") {
  for (const std::string& frame : {
           "_\r\n"s,
           ",3.14\r\n"s,
           ",inf\r\n"s,
           ",-inf\r\n"s,
           ",nan\r\n"s,
           ",1.5e-10\r\n"s,
           "#t\r\n"s,
           "#f\r\n"s,
           "!21\r\nSYNTAX invalid syntax\r\n"s,
           "!0\r\n\r\n"s,
           "=15\r\ntxt:Some string\r\n"s,
           "=8\r\nmkd:\r\n\r\n\r\n"s,
           "(3492890328409238509324850943850943825024385\r\n"s,
           "(-1\r\n"s,
           "%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n,2.5\r\n"s,
           "%0\r\n"s,
           "~3\r\n$1\r\na\r\n:1\r\n#f\r\n"s,
           "~0\r\n"s,
           ">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n"s,
           "*4\r\n_\r\n$-1\r\n%1\r\n~1\r\n_\r\n>1\r\n!3\r\nERR\r\n=4\r\ntxt:\r\n"s,
       }) {
    CHECK(round_trip(frame) == frame);
  }
}

TEST_CASE("an attribute is not written back, the value it annotates is") {
  CHECK(round_trip("|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n:2\r\n:3\r\n") ==
        "*2\r\n:2\r\n:3\r\n");
}

TEST_CASE("encoding appends to what the buffer holds") {
  ReplyValue value;
  REQUIRE(parse_reply("$3\r\nabc\r\n", value));
  std::string out = "+before\r\n";
  encode_reply(value, out);
  CHECK(out == "+before\r\n$3\r\nabc\r\n");
}

TEST_CASE("an element is encoded on its own, as a frame of its own") {
  ReplyValue value;
  REQUIRE(parse_reply("*3\r\n$1\r\na\r\n*1\r\n_\r\n$-1\r\n", value));
  std::string out;
  encode_reply(value.elements[1], out);
  CHECK(out == "*1\r\n_\r\n");
  out.clear();
  encode_reply(value.elements[2], out);
  CHECK(out == "$-1\r\n");
}

TEST_CASE("deeply nested values do not exhaust the stack") {
  constexpr int kDepth = 200000;
  std::string frame;
  for (int i = 0; i < kDepth; ++i) frame += "*1\r\n";
  frame += ":1\r\n";
  ReplyValue value;
  REQUIRE(parse_reply(frame, value));
  std::string out;
  encode_reply(value, out);
  CHECK(out == frame);
  // ReplyValue's destructor recurses per level: take the tree apart from the top.
  std::vector<ReplyValue> pending = std::move(value.elements);
  while (!pending.empty()) {
    ReplyValue last = std::move(pending.back());
    pending.pop_back();
    for (ReplyValue& element : last.elements) pending.push_back(std::move(element));
  }
}

TEST_CASE("random frames of every type round-trip") {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 3000; ++i) {
    const std::string frame = random_frame(rng, 4);
    CHECK(round_trip(frame) == frame);
  }
}
