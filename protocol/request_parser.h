#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request.h"

namespace santral::protocol {

// Hard limits on what one request may claim; they come from the `limits:` section of the config.
struct RequestLimits {
  std::size_t max_args = 1024 * 1024;
  std::size_t max_bulk_bytes = 512ull * 1024 * 1024;  // Redis's proto-max-bulk-len default
  std::size_t max_inline_bytes = 64 * 1024;           // Redis's PROTO_INLINE_MAX_SIZE
};

enum class ParseStatus {
  Complete,  // `out` holds one request; `consumed` bytes of input belong to it
  Empty,     // a request with no arguments (`*0`, `*-1`, blank inline line): skip `consumed` bytes
  NeedMore,  // the request is not complete yet: call again with more bytes
  Error,     // the stream cannot be trusted any more: answer error() and close the connection
};

// What made the stream untrustworthy. Each maps to one message in protocol/errors.h, worded as
// Redis words it, so a client sees the same text it would get from a single Redis server.
enum class ProtocolError {
  None,
  InvalidMultibulkLength,  // `*x` not a number, or above INT_MAX as Redis checks
  TooManyArguments,        // `*n` above limits.max_args
  InvalidBulkLength,       // `$x` not a number or negative
  BulkTooLarge,            // `$n` above limits.max_bulk_bytes
  ExpectedDollar,          // an argument of a multibulk did not start with '$'
  TooBigCountString,       // no CRLF within max_inline_bytes after '*'
  TooBigBulkCountString,   // no CRLF within max_inline_bytes after '$'
  TooBigInline,            // inline line longer than limits.max_inline_bytes
  UnbalancedQuotes,        // inline line with an unterminated quote
};

// Incremental RESP request parser: multibulk arrays (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) and inline
// commands (`GET k\r\n`), byte-for-byte the way Redis 7's networking.c reads them.
//
// parse() always receives the input from the first byte of the current request. On NeedMore it
// keeps its progress as offsets from that first byte, so the caller may move or grow its buffer
// before the next call and no byte is examined twice (a 512 MiB bulk is not rescanned per read).
class RequestParser {
 public:
  explicit RequestParser(const RequestLimits& limits = {});

  ParseStatus parse(std::string_view input, Request& out, std::size_t& consumed);

  ProtocolError error() const { return error_; }
  // For ExpectedDollar: the byte found instead of '$'.
  char unexpected_byte() const { return unexpected_byte_; }
  // For TooManyArguments / BulkTooLarge: the value the client announced.
  std::int64_t announced() const { return announced_; }
  const RequestLimits& limits() const { return limits_; }
  // New limits for the next request (between requests only: a reload's).
  void set_limits(const RequestLimits& limits) { limits_ = limits; }

  // Forget any partial request (after an error, or when the connection is reused).
  void reset();

 private:
  ParseStatus parse_multibulk(std::string_view input, Request& out, std::size_t& consumed);
  ParseStatus parse_inline(std::string_view input, Request& out, std::size_t& consumed);
  ParseStatus fail(ProtocolError error);
  void forget_progress();

  RequestLimits limits_;

  enum class Stage { Start, ArgCount, BulkLength, BulkData, InlineLine };
  Stage stage_ = Stage::Start;
  std::size_t pos_ = 0;         // offset of the next unexamined byte, from the request start
  std::size_t line_start_ = 0;  // offset of the `$` line being read
  std::int64_t args_expected_ = 0;
  std::int64_t bulk_length_ = 0;
  struct Span {
    std::size_t offset;
    std::size_t length;
    bool unquoted;  // offset is into unquoted_, not into the input
  };
  std::vector<Span> spans_;  // arguments found so far, as offsets
  // Inline arguments that needed unescaping, back to back. Views into it are taken only once
  // the whole line is split, so its growth never leaves one dangling.
  std::string unquoted_;
  std::vector<std::string_view> args_;  // what Request::args points at after Complete

  ProtocolError error_ = ProtocolError::None;
  char unexpected_byte_ = 0;
  std::int64_t announced_ = 0;
};

}  // namespace santral::protocol
