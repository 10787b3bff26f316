#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "protocol/request_parser.h"
#include "router/runtime/active_request.h"

namespace santral::router {

// What a client connection needs only while it has input: the read buffer, the parser's place
// in a request not complete yet, and the request being routed (parsed, planned, or waiting). A
// connection with nothing to read holds none of it (it waits for readability without a buffer), so
// an idle client costs only its session; the worker lends these out and takes them back
// (InputPool).
struct SessionInput {
  explicit SessionInput(const protocol::RequestLimits& limits) : parser(limits) {}

  std::vector<char> inbox;
  std::size_t start = 0;  // first byte of the request being parsed
  std::size_t end = 0;    // one past the last byte read
  protocol::RequestParser parser;
  ActiveRequest active;

  bool empty() const { return start == end; }
  // Room at the end for the next read: the partial request moves to the front (the parser
  // counts from its first byte), or the buffer doubles.
  void make_room();
  // Every request read was parsed: start over at the front, and let a large buffer go.
  void rewind();
};

// A worker's spare SessionInputs. Taking one costs no allocation once the worker has served as
// many busy connections at once as it holds spares.
class InputPool {
 public:
  static constexpr std::size_t kInboxBytes = 2048;      // a new read buffer
  static constexpr std::size_t kKeepBytes = 64 * 1024;  // larger ones are not kept
  static constexpr std::size_t kMaxSpares = 64;

  // A buffer for a connection that has something to read, parsing under `limits`.
  std::unique_ptr<SessionInput> take(const protocol::RequestLimits& limits);
  // Back from a connection with nothing buffered (or one that closed).
  void give_back(std::unique_ptr<SessionInput> input);
  std::size_t spares() const { return spares_.size(); }

 private:
  std::vector<std::unique_ptr<SessionInput>> spares_;
};

}  // namespace santral::router
