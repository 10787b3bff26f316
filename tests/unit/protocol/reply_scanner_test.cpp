#include "protocol/reply_scanner.h"

#include <catch2/catch.hpp>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

using namespace santral::protocol;
using namespace std::string_literals;

namespace {

struct Frame {
  char type = 0;
  std::string bytes;

  bool operator==(const Frame&) const = default;
};

struct Outcome {
  std::vector<Frame> frames;
  bool error = false;
  std::string waiting;  // bytes of an unfinished frame (not compared after an error)

  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& outcome) {
  for (const Frame& frame : outcome.frames)
    os << "frame '" << frame.type << "' of " << frame.bytes.size() << " bytes\n";
  return os << "error=" << outcome.error << " waiting=" << outcome.waiting.size();
}

// Plays a backend connection: appends each read, scans until NeedMore, drops each frame. The
// buffer moves to a new allocation after every read.
Outcome feed(const std::vector<std::string_view>& reads) {
  ReplyScanner scanner;
  Outcome outcome;
  std::string buffer;
  for (std::string_view read : reads) {
    std::string grown = buffer + std::string(read);
    buffer.swap(grown);
    for (;;) {
      std::size_t frame_size = 0;
      const ScanStatus status = scanner.scan(buffer, frame_size);
      if (status == ScanStatus::NeedMore) break;
      if (status == ScanStatus::Error) {
        outcome.error = true;
        return outcome;
      }
      REQUIRE(frame_size > 0);
      REQUIRE(frame_size <= buffer.size());
      outcome.frames.push_back({scanner.frame_type(), buffer.substr(0, frame_size)});
      buffer.erase(0, frame_size);
    }
  }
  outcome.waiting = buffer;
  return outcome;
}

// Whole, split in two at every byte boundary, one byte at a time: all must agree.
Outcome scan_every_way(std::string_view input) {
  const Outcome whole = feed({input});
  for (std::size_t split = 1; split < input.size(); ++split) {
    INFO("split at byte " << split);
    REQUIRE(feed({input.substr(0, split), input.substr(split)}) == whole);
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < input.size(); ++i) bytes.push_back(input.substr(i, 1));
  INFO("one byte at a time");
  REQUIRE(feed(bytes) == whole);
  return whole;
}

Outcome one_frame(char type, std::string bytes) {
  return {{{type, std::move(bytes)}}, false, ""};
}

// One reply of every kind a Redis 7 server sends, with the type scan() must report.
const std::vector<Frame>& every_kind() {
  static const std::vector<Frame> frames = {
      {'+', "+OK\r\n"},
      {'+', "+\r\n"},
      {'-', "-ERR unknown command 'FOO'\r\n"},
      {':', ":-42\r\n"},
      {'$', "$5\r\nhello\r\n"},
      {'$', "$0\r\n\r\n"},
      {'$', "$-1\r\n"},
      {'$', "$8\r\n\r\n$3\r\n\0\n\r\n"s},
      {'*', "*-1\r\n"},
      {'*', "*0\r\n"},
      {'*', "*3\r\n$3\r\nfoo\r\n:1\r\n$-1\r\n"},
      {'*', "*2\r\n*2\r\n:1\r\n:2\r\n*1\r\n*0\r\n"},
      {'_', "_\r\n"},
      {',', ",3.14\r\n"},
      {',', ",-inf\r\n"},
      {'#', "#t\r\n"},
      {'#', "#f\r\n"},
      {'!', "!21\r\nSYNTAX invalid syntax\r\n"},
      {'=', "=15\r\ntxt:Some string\r\n"},
      {'(', "(3492890328409238509324850943850943825024385\r\n"},
      {'%', "%2\r\n+first\r\n:1\r\n+second\r\n*2\r\n:2\r\n:3\r\n"},
      {'%', "%0\r\n"},
      {'~', "~3\r\n+orange\r\n+apple\r\n#t\r\n"},
      {'>', ">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n"},
  };
  return frames;
}

}  // namespace

TEST_CASE("every RESP2 and RESP3 type is one frame of its own type") {
  for (const Frame& frame : every_kind()) {
    INFO("frame " << frame.bytes);
    CHECK(scan_every_way(frame.bytes) == one_frame(frame.type, frame.bytes));
  }
}

TEST_CASE("frames back to back come out one by one") {
  std::string input;
  std::vector<Frame> expected;
  for (const Frame& frame : every_kind()) {
    input += frame.bytes;
    expected.push_back(frame);
  }
  CHECK(scan_every_way(input) == Outcome{expected, false, ""});
}

TEST_CASE("an unfinished frame waits for more bytes") {
  for (std::string partial : {"+OK", "+OK\r", "$5\r\nhel", "$5\r\nhello\r", "*2\r\n:1\r\n",
                              "%1\r\n+k\r\n", "|1\r\n+k\r\n+v\r\n", "*1\r\n|1\r\n+k\r\n+v\r\n"}) {
    INFO("partial " << partial);
    CHECK(scan_every_way(partial) == Outcome{{}, false, partial});
  }
}

TEST_CASE("attributes belong to the reply that follows them") {
  SECTION("in front of the top-level reply") {
    const std::string reply =
        "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
        "*2\r\n:2039123\r\n:9543892\r\n";
    CHECK(scan_every_way(reply) == one_frame('*', reply));
  }
  SECTION("in front of a nested element, which it does not count as") {
    const std::string reply = "*3\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n$2\r\nv2\r\n:3\r\n";
    CHECK(scan_every_way(reply + "+next\r\n") ==
          Outcome{{{'*', reply}, {'+', "+next\r\n"}}, false, ""});
  }
  SECTION("several, nested inside one another, and empty") {
    const std::string reply = "|1\r\n|0\r\n+k\r\n*1\r\n|1\r\n+a\r\n+b\r\n:1\r\n|0\r\n$-1\r\n";
    CHECK(scan_every_way(reply) == one_frame('$', reply));
  }
  SECTION("in front of a scalar and of a push") {
    const std::string scalar = "|1\r\n+a\r\n+b\r\n:7\r\n";
    const std::string push = "|1\r\n+a\r\n+b\r\n>2\r\n+x\r\n+y\r\n";
    CHECK(scan_every_way(scalar + push) == Outcome{{{':', scalar}, {'>', push}}, false, ""});
  }
}

TEST_CASE("aggregates nest to any depth") {
  std::string deep;
  for (int i = 0; i < 2000; ++i)
    deep += i % 3 == 0 ? "*1\r\n" : i % 3 == 1 ? "~1\r\n" : "%1\r\n:0\r\n";
  deep += "$3\r\nend\r\n";
  const Outcome outcome = feed({deep, "+after\r\n"});
  CHECK(outcome == Outcome{{{'*', deep}, {'+', "+after\r\n"}}, false, ""});
}

TEST_CASE("a large bulk arriving in small reads is one frame") {
  std::string payload(1u << 20, 'p');
  for (std::size_t i = 0; i < payload.size(); i += 1021) payload[i] = i % 2 ? '\r' : '\n';
  const std::string reply =
      "*2\r\n$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n:1\r\n";
  std::vector<std::string_view> reads;
  for (std::size_t at = 0; at < reply.size(); at += 4096)
    reads.push_back(std::string_view(reply).substr(at, 4096));
  CHECK(feed(reads) == one_frame('*', reply));
}

TEST_CASE("anything that is not RESP is an error") {
  for (std::string bad : {"?\r\n",
                          "OK\r\n",
                          "\r\n+OK\r\n",
                          "+OK\rX",
                          "$abc\r\n",
                          "$\r\n",
                          "$-2\r\n",
                          "$-1x\r\n",
                          "$3\r\nfooXY",
                          "$3\r\nfoo\rX",
                          "$?\r\n",
                          "*?\r\n",
                          "*-2\r\n",
                          "*1x\r\n",
                          "~-1\r\n",
                          "%-1\r\n",
                          ">-1\r\n",
                          "|-1\r\n",
                          "!-1\r\n",
                          "=-1\r\n",
                          "$ 3\r\nfoo\r\n",
                          "*2\r\n:1\r\n@\r\n",
                          "%1\r\n+k\r\n$1\r\nvv\r\n",
                          "$99999999999999999999\r\n"}) {
    INFO("input " << bad);
    CHECK(scan_every_way(bad) == Outcome{{}, true, ""});
  }
}

TEST_CASE("frames before an error are still delivered") {
  CHECK(scan_every_way("+OK\r\n:1\r\n^\r\n") ==
        Outcome{{{'+', "+OK\r\n"}, {':', ":1\r\n"}}, true, ""});
}

TEST_CASE("frame_type() reports the last complete frame") {
  ReplyScanner scanner;
  std::size_t size = 0;
  CHECK(scanner.frame_type() == 0);
  REQUIRE(scanner.scan(">1\r\n+x\r\n", size) == ScanStatus::Complete);
  CHECK(scanner.frame_type() == '>');
  REQUIRE(scanner.scan("*1\r\n", size) == ScanStatus::NeedMore);
  CHECK(scanner.frame_type() == '>');
  REQUIRE(scanner.scan("*1\r\n:5\r\n", size) == ScanStatus::Complete);
  CHECK(scanner.frame_type() == '*');
  CHECK(size == 8);
}

TEST_CASE("reset() forgets a partial frame") {
  ReplyScanner scanner;
  std::size_t size = 0;
  REQUIRE(scanner.scan("*3\r\n:1\r\n", size) == ScanStatus::NeedMore);
  scanner.reset();
  REQUIRE(scanner.scan("+PONG\r\n", size) == ScanStatus::Complete);
  CHECK(size == 7);
  CHECK(scanner.frame_type() == '+');
}

// White-box: the scanner resumes from offsets. The bytes it has passed are overwritten between
// calls; a scanner that started over would trip on them.
TEST_CASE("a reply scanner resuming does not re-read bytes already passed") {
  SECTION("elements already passed") {
    ReplyScanner scanner;
    std::size_t size = 0;
    REQUIRE(scanner.scan("*2\r\n$3\r\nfoo\r\n:1", size) == ScanStatus::NeedMore);
    std::string moved(13, '#');
    moved += ":1\r\n";
    REQUIRE(scanner.scan(moved, size) == ScanStatus::Complete);
    CHECK(size == moved.size());
    CHECK(scanner.frame_type() == '*');
  }
  SECTION("the part of a line already searched for its CR") {
    ReplyScanner scanner;
    std::size_t size = 0;
    REQUIRE(scanner.scan("*1\r\n+abc", size) == ScanStatus::NeedMore);
    const std::string moved = "*1\r\n+a\rc\r\n";  // a fresh search would stop at the first CR
    REQUIRE(scanner.scan(moved, size) == ScanStatus::Complete);
    CHECK(size == moved.size());
  }
}
