// Santral's request parser and a real redis-server, fed the same random valid and invalid
// bytes, agree on where each command ends and on which inputs are protocol errors.
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <climits>
#include <iomanip>
#include <random>

#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/request_parser.h"
#include "tests/support/redis_server.h"

using namespace santral;
using namespace santral::test;

namespace {

struct Verdict {
  int commands = 0;   // commands answered before the stream ended or broke
  std::string error;  // the protocol error, if the stream broke
  bool operator==(const Verdict&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Verdict& v) {
  return os << v.commands << " commands" << (v.error.empty() ? "" : ", then: " + v.error);
}

// Redis's verdict: every command gets exactly one reply; a protocol error is the last reply.
Verdict ask_redis(int port, const std::string& input) {
  RawConnection raw(port);
  raw.send(input);
  ::shutdown(raw.fd(), SHUT_WR);  // Redis answers what it has, then closes
  std::string received;
  REQUIRE(raw.wait_closed(received, 5000));
  Verdict verdict;
  protocol::ReplyScanner scanner;
  std::string_view rest = received;
  while (!rest.empty()) {
    std::size_t size = 0;
    REQUIRE(scanner.scan(rest, size) == protocol::ScanStatus::Complete);
    std::string_view frame = rest.substr(0, size);
    if (frame.starts_with("-ERR Protocol error")) {
      verdict.error = std::string(frame.substr(1, frame.size() - 3));
    } else {
      ++verdict.commands;
    }
    rest.remove_prefix(size);
  }
  return verdict;
}

std::string message_of(const protocol::RequestParser& parser) {
  using protocol::ClientError;
  using protocol::ProtocolError;
  switch (parser.error()) {
    case ProtocolError::InvalidMultibulkLength:
      return protocol::error_message(ClientError::InvalidMultibulkLength);
    case ProtocolError::InvalidBulkLength:
      return protocol::error_message(ClientError::InvalidBulkLength);
    case ProtocolError::ExpectedDollar: {
      char got = parser.unexpected_byte();
      return protocol::error_message(ClientError::ExpectedDollar,
                                     got == '\r' || got == '\n' ? ' ' : got);
    }
    case ProtocolError::TooBigCountString:
      return protocol::error_message(ClientError::TooBigCountString);
    case ProtocolError::TooBigBulkCountString:
      return protocol::error_message(ClientError::TooBigBulkCountString);
    case ProtocolError::UnbalancedQuotes:
      return protocol::error_message(ClientError::UnbalancedQuotes);
    default:
      return "unexpected parser error " + std::to_string(static_cast<int>(parser.error()));
  }
}

// Santral's verdict, with Redis's own limits (Redis allows up to INT_MAX arguments).
Verdict ask_santral(const std::string& input) {
  protocol::RequestParser parser(
      {.max_args = INT_MAX, .max_bulk_bytes = 512ull << 20, .max_inline_bytes = 65536});
  Verdict verdict;
  std::string_view rest = input;
  while (!rest.empty()) {
    protocol::Request request;
    std::size_t consumed = 0;
    auto status = parser.parse(rest, request, consumed);
    if (status == protocol::ParseStatus::NeedMore) break;
    if (status == protocol::ParseStatus::Error) {
      verdict.error = message_of(parser);
      break;
    }
    if (status == protocol::ParseStatus::Complete) ++verdict.commands;
    rest.remove_prefix(consumed);
  }
  return verdict;
}

// Commands that always get exactly one reply and change nothing about the connection.
const char* const kNames[] = {"PING", "ECHO", "GET", "EXISTS", "STRLEN"};

std::string random_token(std::mt19937& rng, bool binary) {
  std::uniform_int_distribution<int> length(0, 12);
  std::string token;
  int n = length(rng);
  for (int i = 0; i < n; ++i) {
    if (binary) {
      token.push_back(static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng)));
    } else {
      token.push_back(static_cast<char>(std::uniform_int_distribution<int>('a', 'z')(rng)));
    }
  }
  return token;
}

std::string multibulk(std::mt19937& rng) {
  std::vector<std::string> args = {kNames[rng() % std::size(kNames)]};
  int extra = static_cast<int>(rng() % 4);
  for (int i = 0; i < extra; ++i) args.push_back(random_token(rng, true));
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string inline_command(std::mt19937& rng) {
  std::string out = kNames[rng() % std::size(kNames)];
  int extra = static_cast<int>(rng() % 4);
  for (int i = 0; i < extra; ++i) {
    switch (rng() % 4) {
      case 0:
        out += " \"" + random_token(rng, false) + " \\x41\\n\"";
        break;
      case 1:
        out += " '" + random_token(rng, false) + "'";
        break;
      default:
        out += " " + random_token(rng, false);
        break;
    }
  }
  return out + (rng() % 2 ? "\r\n" : "\n");
}

// Random bytes in framing positions: the characters RESP framing is made of, and no NUL (Redis
// reads its lines with strchr, which stops at a NUL; Santral does not).
void mutate(std::mt19937& rng, std::string& input) {
  static const char kBytes[] = {'*', '$', '\r', '\n', '-',  '0', '1', '9',
                                ' ', '"', '\'', 'x',  '\\', '+', ':'};
  int mutations = static_cast<int>(rng() % 3);
  for (int m = 0; m < mutations && !input.empty(); ++m) {
    std::size_t at = rng() % input.size();
    char byte = kBytes[rng() % std::size(kBytes)];
    switch (rng() % 4) {
      case 0:
        input[at] = byte;
        break;
      case 1:
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), byte);
        break;
      case 2:
        input.erase(at, 1);
        break;
      case 3:
        input.resize(at);
        break;
    }
  }
  // Bulk payloads may hold NULs; framing lines must not (see above).
  for (auto& c : input)
    if (c == '\0') c = 'z';
}

}  // namespace

TEST_CASE("Santral's parser and redis-server agree on command boundaries and protocol errors") {
  RedisServer redis;
  std::mt19937 rng(20261130);
  int errors = 0;
  int agreed = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string input;
    int commands = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < commands; ++c) input += rng() % 2 ? multibulk(rng) : inline_command(rng);
    if (rng() % 3 != 0) mutate(rng, input);
    Verdict redis_verdict = ask_redis(redis.port(), input);
    Verdict santral_verdict = ask_santral(input);
    INFO("input #" << i << ": " << std::quoted(input));
    REQUIRE(santral_verdict == redis_verdict);
    errors += !redis_verdict.error.empty();
    ++agreed;
  }
  CHECK(agreed == 1500);
  CHECK(errors > 100);  // the mutations really do produce protocol errors
}
