#include "protocol/request_parser.h"

#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

using namespace santral::protocol;
using namespace std::string_literals;

namespace {

// What the caller saw for one request (Complete or Empty).
struct Seen {
  ParseStatus status = ParseStatus::Complete;
  std::vector<std::string> args;
  std::string raw;
  bool inline_form = false;
  std::size_t consumed = 0;

  bool operator==(const Seen&) const = default;
};

struct Outcome {
  std::vector<Seen> requests;
  ProtocolError error = ProtocolError::None;
  char unexpected_byte = 0;
  std::int64_t announced = 0;
  std::string waiting;  // bytes of an unfinished request (not compared after an error)

  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& outcome) {
  for (const Seen& seen : outcome.requests) {
    os << (seen.status == ParseStatus::Empty ? "empty"
           : seen.inline_form                ? "inline"
                                             : "multibulk")
       << " consumed=" << seen.consumed << " [";
    for (const std::string& arg : seen.args) os << '"' << arg << "\" ";
    os << "]\n";
  }
  return os << "error=" << static_cast<int>(outcome.error) << " byte=" << outcome.unexpected_byte
            << " announced=" << outcome.announced << " waiting=" << outcome.waiting.size();
}

bool inside(std::string_view part, const std::string& buffer) {
  return part.data() >= buffer.data() && part.data() + part.size() <= buffer.data() + buffer.size();
}

// Plays the connection: appends each read to its buffer, parses until NeedMore and drops what
// was consumed. The buffer is copied to a new allocation after every read, so a parser that
// kept a pointer instead of an offset would read freed memory.
Outcome feed(const std::vector<std::string_view>& reads, const RequestLimits& limits = {}) {
  RequestParser parser(limits);
  Outcome outcome;
  std::string buffer;
  for (std::string_view read : reads) {
    std::string grown = buffer + std::string(read);
    buffer.swap(grown);
    for (;;) {
      Request request;
      std::size_t consumed = 0;
      const ParseStatus status = parser.parse(buffer, request, consumed);
      if (status == ParseStatus::NeedMore) {
        REQUIRE(consumed == 0);
        break;
      }
      if (status == ParseStatus::Error) {
        outcome.error = parser.error();
        outcome.unexpected_byte = parser.unexpected_byte();
        outcome.announced = parser.announced();
        return outcome;
      }
      REQUIRE(consumed > 0);
      REQUIRE(consumed <= buffer.size());
      Seen seen{status, {}, std::string(request.raw), request.inline_form, consumed};
      if (status == ParseStatus::Complete) {
        REQUIRE_FALSE(request.args.empty());
        for (std::string_view arg : request.args) {
          if (!request.inline_form) REQUIRE(inside(arg, buffer));
          seen.args.emplace_back(arg);
        }
        if (request.inline_form) {
          REQUIRE(request.raw.empty());
        } else {
          REQUIRE(request.raw.data() == buffer.data());
          REQUIRE(request.raw.size() == consumed);
        }
      }
      outcome.requests.push_back(std::move(seen));
      buffer.erase(0, consumed);
    }
  }
  outcome.waiting = buffer;
  return outcome;
}

// Feeds `input` whole, split in two at every byte boundary, and one byte at a time; all must
// agree. Returns what the whole feed saw.
Outcome parse_every_way(std::string_view input, const RequestLimits& limits = {}) {
  const Outcome whole = feed({input}, limits);
  for (std::size_t split = 1; split < input.size(); ++split) {
    INFO("split at byte " << split);
    REQUIRE(feed({input.substr(0, split), input.substr(split)}, limits) == whole);
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < input.size(); ++i) bytes.push_back(input.substr(i, 1));
  INFO("one byte at a time");
  REQUIRE(feed(bytes, limits) == whole);
  return whole;
}

Seen multibulk(std::vector<std::string> args, std::string raw) {
  const std::size_t size = raw.size();
  return {ParseStatus::Complete, std::move(args), std::move(raw), false, size};
}

Seen inline_request(std::vector<std::string> args, std::size_t consumed) {
  return {ParseStatus::Complete, std::move(args), {}, true, consumed};
}

Seen empty(std::size_t consumed) {
  return {ParseStatus::Empty, {}, {}, false, consumed};
}

Outcome failed(ProtocolError error, char byte = 0, std::int64_t announced = 0) {
  return {{}, error, byte, announced, {}};
}

RequestLimits small_limits() {
  RequestLimits limits;
  limits.max_args = 3;
  limits.max_bulk_bytes = 5;
  limits.max_inline_bytes = 16;
  return limits;
}

}  // namespace

TEST_CASE("a multibulk request is its arguments and its exact bytes") {
  const std::string get = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
  const Outcome outcome = parse_every_way(get);
  CHECK(outcome == Outcome{{multibulk({"GET", "key"}, get)}, {}, 0, 0, ""});
}

TEST_CASE("pipelined multibulk and inline requests come out in order") {
  const std::string ping = "*1\r\n$4\r\nPING\r\n";
  const std::string set = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
  const std::string empty_arg = "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";
  const std::string input = ping + "GET a\r\n" + "\r\n" + set + "ECHO hi\n" + "*0\r\n" + "*-1\r\n" +
                            " \t \n" + empty_arg + "*-100\r\n" + "DEL  x   y\r\n";
  const Outcome outcome = parse_every_way(input);
  const Outcome expected{{multibulk({"PING"}, ping), inline_request({"GET", "a"}, 7), empty(2),
                          multibulk({"SET", "k", "value"}, set), inline_request({"ECHO", "hi"}, 8),
                          empty(4), empty(5), empty(4), multibulk({"ECHO", ""}, empty_arg),
                          empty(7), inline_request({"DEL", "x", "y"}, 12)},
                         {},
                         0,
                         0,
                         ""};
  CHECK(outcome == expected);
}

TEST_CASE("bulk payloads are binary: CRLF and NUL inside are data") {
  const std::string input = "*3\r\n$3\r\nSET\r\n$4\r\n\r\n\r\n\r\n$6\r\na\0\r\nb\n\r\n"s;
  const Outcome outcome = parse_every_way(input);
  CHECK(outcome == Outcome{{multibulk({"SET", "\r\n\r\n", "a\0\r\nb\n"s}, input)}, {}, 0, 0, ""});
}

TEST_CASE("Redis skips the two bytes after a CR and after a payload without looking at them") {
  SECTION("payload followed by two bytes that are not CRLF") {
    const std::string input = "*1\r\n$3\r\nfooXY";
    CHECK(parse_every_way(input) == Outcome{{multibulk({"foo"}, input)}, {}, 0, 0, ""});
  }
  SECTION("count and length lines ended by CR and any byte") {
    const std::string input = "*2\rX$4\r?PING\r\n$1\r\nx\r\n";
    CHECK(parse_every_way(input) == Outcome{{multibulk({"PING", "x"}, input)}, {}, 0, 0, ""});
  }
  SECTION("a count line needs the byte after its CR before it counts") {
    CHECK(parse_every_way("*1\r") == Outcome{{}, {}, 0, 0, "*1\r"});
  }
  SECTION("a payload needs its two trailing bytes before it counts") {
    CHECK(parse_every_way("*1\r\n$3\r\nfoo\r") == Outcome{{}, {}, 0, 0, "*1\r\n$3\r\nfoo\r"});
  }
}

TEST_CASE("an unfinished request waits for more bytes") {
  const std::string partial = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nval";
  CHECK(parse_every_way(partial) == Outcome{{}, {}, 0, 0, partial});
  CHECK(parse_every_way("GET key") == Outcome{{}, {}, 0, 0, "GET key"});
  // Redis reads the whole `$` line before it looks at its first byte.
  CHECK(parse_every_way("*1\r\nfoo") == Outcome{{}, {}, 0, 0, "*1\r\nfoo"});
}

TEST_CASE("multibulk counts and lengths follow Redis's string2ll") {
  SECTION("counts at and below zero are empty requests") {
    CHECK(parse_every_way("*0\r\n") == Outcome{{empty(4)}, {}, 0, 0, ""});
    CHECK(parse_every_way("*-1\r\n") == Outcome{{empty(5)}, {}, 0, 0, ""});
    CHECK(parse_every_way("*-9223372036854775808\r\n") == Outcome{{empty(23)}, {}, 0, 0, ""});
  }
  SECTION("counts that are not canonical integers") {
    for (std::string count : {"", "abc", "+1", "01", "-0", " 1", "1 ", "1a", "--1",
                              "99999999999999999999", "-9223372036854775809", "2147483648"}) {
      INFO("count '" << count << "'");
      CHECK(parse_every_way("*" + count + "\r\n") == failed(ProtocolError::InvalidMultibulkLength));
    }
  }
  SECTION("INT_MAX passes Redis's check and meets ours") {
    CHECK(parse_every_way("*2147483647\r\n") ==
          failed(ProtocolError::TooManyArguments, 0, INT_MAX));
  }
  SECTION("bulk lengths that are not canonical or negative") {
    for (std::string length :
         {"", "abc", "+3", "03", "-0", "-1", "-3", " 3", "3 ", "99999999999999999999"}) {
      INFO("length '" << length << "'");
      CHECK(parse_every_way("*1\r\n$" + length + "\r\nfoo\r\n") ==
            failed(ProtocolError::InvalidBulkLength));
    }
  }
  SECTION("long numbers are read exactly, whatever their length") {
    CHECK(parse_every_way("*1\r\n$999999999999999999\r\n") ==
          failed(ProtocolError::BulkTooLarge, 0, 999999999999999999));
    CHECK(parse_every_way("*1\r\n$1000000000000000000\r\n") ==
          failed(ProtocolError::BulkTooLarge, 0, 1000000000000000000));
    CHECK(parse_every_way("*1\r\n$9223372036854775807\r\n") ==
          failed(ProtocolError::BulkTooLarge, 0, INT64_MAX));
    CHECK(parse_every_way("*1\r\n$9223372036854775808\r\n") ==
          failed(ProtocolError::InvalidBulkLength));
    CHECK(parse_every_way("*999999999999999999\r\n") ==
          failed(ProtocolError::InvalidMultibulkLength));
    CHECK(parse_every_way("*1\r\n$00\r\n\r\n") == failed(ProtocolError::InvalidBulkLength));
    CHECK(parse_every_way("*00\r\n") == failed(ProtocolError::InvalidMultibulkLength));
  }
  SECTION("a zero-length bulk is an empty argument") {
    const std::string input = "*1\r\n$0\r\n\r\n";
    CHECK(parse_every_way(input) == Outcome{{multibulk({""}, input)}, {}, 0, 0, ""});
  }
}

TEST_CASE("each protocol error has its trigger") {
  const RequestLimits limits = small_limits();

  SECTION("an argument that does not start with '$'") {
    CHECK(parse_every_way("*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n") ==
          failed(ProtocolError::ExpectedDollar, 'f'));
    CHECK(parse_every_way("*1\r\n\r\n") == failed(ProtocolError::ExpectedDollar, '\r'));
  }
  SECTION("more arguments than limits.max_args") {
    CHECK(parse_every_way("*4\r\n$1\r\na\r\n", limits) ==
          failed(ProtocolError::TooManyArguments, 0, 4));
    const std::string three = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n";
    CHECK(parse_every_way(three, limits) ==
          Outcome{{multibulk({"a", "b", "c"}, three)}, {}, 0, 0, ""});
  }
  SECTION("a bulk longer than limits.max_bulk_bytes") {
    CHECK(parse_every_way("*1\r\n$6\r\nabcdef\r\n", limits) ==
          failed(ProtocolError::BulkTooLarge, 0, 6));
    const std::string five = "*1\r\n$5\r\nabcde\r\n";
    CHECK(parse_every_way(five, limits) == Outcome{{multibulk({"abcde"}, five)}, {}, 0, 0, ""});
  }
  SECTION("no CR after '*' within limits.max_inline_bytes") {
    CHECK(parse_every_way("*" + std::string(16, '1'), limits) ==
          failed(ProtocolError::TooBigCountString));
    const std::string at_limit = "*" + std::string(15, '1');
    CHECK(parse_every_way(at_limit, limits) == Outcome{{}, {}, 0, 0, at_limit});
  }
  SECTION("no CR after '$' within limits.max_inline_bytes") {
    CHECK(parse_every_way("*1\r\n$" + std::string(16, '1'), limits) ==
          failed(ProtocolError::TooBigBulkCountString));
    const std::string at_limit = "*1\r\n$" + std::string(15, '1');
    CHECK(parse_every_way(at_limit, limits) == Outcome{{}, {}, 0, 0, at_limit});
  }
  SECTION("an inline line without LF beyond limits.max_inline_bytes") {
    CHECK(parse_every_way("GET " + std::string(13, 'k'), limits) ==
          failed(ProtocolError::TooBigInline));
    const std::string at_limit = "GET " + std::string(12, 'k');
    CHECK(parse_every_way(at_limit, limits) == Outcome{{}, {}, 0, 0, at_limit});
  }
  SECTION("unbalanced quotes in an inline line") {
    for (std::string line : {"SET \"abc", "SET 'abc", "SET \"a\"b", "SET 'a'b", "SET \"abc\\\"",
                             "SET \"abc\\", "\"", "SET k \"v\"\"w\""}) {
      INFO("line " << line);
      CHECK(parse_every_way(line + "\r\n") == failed(ProtocolError::UnbalancedQuotes));
    }
  }
  SECTION("an inline line with more than limits.max_args arguments") {
    CHECK(parse_every_way("a b c d\r\n", limits) == failed(ProtocolError::TooManyArguments, 0, 4));
  }
}

// Redis applies its line-length limit only while a line is unfinished, so the same bytes pass
// or fail depending on how they were split into reads. Santral applies it to every line.
TEST_CASE("line-length limits hold however the line arrives") {
  auto limits = small_limits();
  const std::string too_long = "SET key " + std::string(30, 'v') + "\r\n";
  auto outcome = parse_every_way(too_long, limits);
  CHECK(outcome.error == ProtocolError::TooBigInline);
  const std::string count = "*" + std::string(30, '1') + "\r\n";
  CHECK(parse_every_way(count, limits).error == ProtocolError::TooBigCountString);
  const std::string length = "*1\r\n$" + std::string(30, '1') + "\r\n";
  CHECK(parse_every_way(length, limits).error == ProtocolError::TooBigBulkCountString);
  const std::string fits = "SET k " + std::string(8, 'v') + "\r\n";
  CHECK(parse_every_way(fits, limits).error == ProtocolError::None);
}

TEST_CASE("an error sticks until reset()") {
  RequestParser parser;
  Request request;
  std::size_t consumed = 0;
  REQUIRE(parser.parse("*1\r\n$x\r\n", request, consumed) == ParseStatus::Error);
  CHECK(parser.error() == ProtocolError::InvalidBulkLength);
  CHECK(parser.parse("PING\r\n", request, consumed) == ParseStatus::Error);
  CHECK(parser.error() == ProtocolError::InvalidBulkLength);
  parser.reset();
  CHECK(parser.error() == ProtocolError::None);
  REQUIRE(parser.parse("PING\r\n", request, consumed) == ParseStatus::Complete);
  CHECK(request.name() == "PING");
}

TEST_CASE("inline lines are split the way sdssplitargs splits them") {
  SECTION("quotes and escapes") {
    const std::string line =
        "SET \"a b\" 'c d' \"\\x41\\x7a\\n\\r\\t\\b\\a\\\\\\\"\\q\" 'it\\'s \\n' \"\" ''\r\n";
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"SET", "a b", "c d", "Az\n\r\t\b\a\\\"q", "it's \\n", "", ""},
                                  line.size())},
                  {},
                  0,
                  0,
                  ""});
  }
  SECTION("\\x needs two hex digits, else the x is taken literally") {
    const std::string line = "ECHO \"\\xZZ\" \"\\x4\"\n";
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"ECHO", "xZZ", "x4"}, line.size())}, {}, 0, 0, ""});
  }
  SECTION("a quote can open in the middle of an argument") {
    const std::string line = "SET foo\"bar baz\" x'y'\r\n";
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"SET", "foobar baz", "xy"}, line.size())}, {}, 0, 0, ""});
  }
  SECTION("blanks: VT and FF separate only between arguments; CR inside the line separates") {
    const std::string line = "\v\fGET a\vb\fc\tkey\rx \r\n";
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"GET", "a\vb\fc", "key", "x"}, line.size())}, {}, 0, 0, ""});
  }
  SECTION("a closing quote may be followed by any blank") {
    const std::string line = "ECHO \"a\"\vb\n";
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"ECHO", "a", "b"}, line.size())}, {}, 0, 0, ""});
  }
  SECTION("lines with nothing but line ends or blanks are empty requests") {
    CHECK(parse_every_way("\n") == Outcome{{empty(1)}, {}, 0, 0, ""});
    CHECK(parse_every_way("\r\n") == Outcome{{empty(2)}, {}, 0, 0, ""});
    CHECK(parse_every_way("\r\r\n") == Outcome{{empty(3)}, {}, 0, 0, ""});
    CHECK(parse_every_way(" \t\v\f\n\n") == Outcome{{empty(5), empty(1)}, {}, 0, 0, ""});
  }
  SECTION("only the CR right before the LF is part of the line end") {
    const std::string line = "GET k\r\r\n";
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"GET", "k"}, line.size())}, {}, 0, 0, ""});
  }
  SECTION("a NUL byte is an ordinary byte") {
    const std::string line = "SET k a\0b\r\n"s;
    CHECK(parse_every_way(line) ==
          Outcome{{inline_request({"SET", "k", "a\0b"s}, line.size())}, {}, 0, 0, ""});
  }
}

TEST_CASE("plain inline arguments are views into the input, unescaped ones are not") {
  RequestParser parser;
  Request request;
  std::size_t consumed = 0;
  const std::string line = "SET plain \"quoted\" \"esc\\n\" mid\"dle\" 'single'\r\n";
  REQUIRE(parser.parse(line, request, consumed) == ParseStatus::Complete);
  REQUIRE(request.args.size() == 6);
  CHECK(request.inline_form);
  CHECK(request.raw.empty());
  CHECK(request.args[0].data() == line.data());
  CHECK(request.args[1].data() == line.data() + 4);
  CHECK(request.args[2].data() == line.data() + 11);  // inside the quotes
  CHECK(request.args[2] == "quoted");
  CHECK_FALSE(inside(request.args[3], line));
  CHECK(request.args[3] == "esc\n");
  CHECK_FALSE(inside(request.args[4], line));
  CHECK(request.args[4] == "middle");
  CHECK(request.args[5].data() == line.data() + 37);
  CHECK(request.args[5] == "single");
}

TEST_CASE("multibulk arguments are views at their place in the input") {
  RequestParser parser;
  Request request;
  std::size_t consumed = 0;
  const std::string input = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n$4\r\nPING\r\n";
  REQUIRE(parser.parse(input, request, consumed) == ParseStatus::Complete);
  REQUIRE(request.args.size() == 2);
  CHECK(request.args[0].data() == input.data() + 8);
  CHECK(request.args[1].data() == input.data() + 17);
  CHECK(request.raw.data() == input.data());
  CHECK(consumed == 22);
  CHECK_FALSE(request.inline_form);
}

TEST_CASE("a 4 MiB bulk arriving in 4 KiB reads completes") {
  std::string payload(4u << 20, 'x');
  for (std::size_t i = 0; i < payload.size(); i += 4093) payload[i] = (i / 4093) % 2 ? '\r' : '\n';
  const std::string input = "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + std::to_string(payload.size()) +
                            "\r\n" + payload + "\r\n";
  std::vector<std::string_view> reads;
  for (std::size_t at = 0; at < input.size(); at += 4096)
    reads.push_back(std::string_view(input).substr(at, 4096));
  const Outcome outcome = feed(reads);
  REQUIRE(outcome.requests.size() == 1);
  CHECK(outcome.requests[0].args == std::vector<std::string>{"SET", "big", payload});
  CHECK(outcome.requests[0].consumed == input.size());
  CHECK(outcome.waiting.empty());
}

TEST_CASE("a bulk length near INT64_MAX is not an overflow") {
  RequestLimits limits;
  limits.max_bulk_bytes = SIZE_MAX;
  RequestParser parser(limits);
  Request request;
  std::size_t consumed = 0;
  CHECK(parser.parse("*1\r\n$9223372036854775807\r\nabc", request, consumed) ==
        ParseStatus::NeedMore);
  CHECK(parser.parse("*1\r\n$9223372036854775807\r\nabcdef", request, consumed) ==
        ParseStatus::NeedMore);
}

// White-box: the parser resumes from offsets and never reads bytes it has passed again. To
// show it, the bytes it has passed are overwritten between calls; a parser that started over
// would trip on them.
TEST_CASE("a request parser resuming does not re-read bytes already passed") {
  SECTION("multibulk") {
    RequestParser parser;
    Request request;
    std::size_t consumed = 0;
    REQUIRE(parser.parse("*2\r\n$3\r\nGET\r\n$3\r\nke", request, consumed) ==
            ParseStatus::NeedMore);
    std::string moved(17, '#');
    moved += "key\r\n";
    REQUIRE(parser.parse(moved, request, consumed) == ParseStatus::Complete);
    REQUIRE(request.args.size() == 2);
    CHECK(request.args[0] == "###");  // the first argument's place, whatever is there now
    CHECK(request.args[1] == "key");
    CHECK(consumed == moved.size());
  }
  SECTION("the search for the end of an inline line") {
    RequestParser parser;
    Request request;
    std::size_t consumed = 0;
    REQUIRE(parser.parse("GET ke", request, consumed) == ParseStatus::NeedMore);
    const std::string moved = "GET\nkey\r\n";  // a fresh search would stop at byte 3
    REQUIRE(parser.parse(moved, request, consumed) == ParseStatus::Complete);
    CHECK(consumed == moved.size());
  }
}
