// The request parser on arbitrary bytes: never crashes, never reads outside its input, and
// parses the same requests whether the bytes arrive at once or in pieces.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/request_parser.h"
#include "tests/fuzz/fuzz_check.h"

using santral::protocol::ParseStatus;
using santral::protocol::Request;
using santral::protocol::RequestLimits;
using santral::protocol::RequestParser;

namespace {

struct Outcome {
  std::vector<std::vector<std::string>> requests;
  bool error = false;
  santral::protocol::ProtocolError kind = santral::protocol::ProtocolError::None;
  bool operator==(const Outcome&) const = default;
};

// Feeds `input` in pieces of `piece` bytes (0: all at once), as a connection's reads would.
Outcome parse(std::string_view input, std::size_t piece, const RequestLimits& limits) {
  RequestParser parser(limits);
  Outcome outcome;
  std::string buffer;
  std::size_t fed = 0;
  while (true) {
    std::size_t take = piece == 0 ? input.size() - fed : std::min(piece, input.size() - fed);
    buffer.append(input.substr(fed, take));
    fed += take;
    while (!buffer.empty()) {
      Request request;
      std::size_t consumed = 0;
      auto status = parser.parse(buffer, request, consumed);
      if (status == ParseStatus::NeedMore) break;
      if (status == ParseStatus::Error) {
        outcome.error = true;
        outcome.kind = parser.error();
        return outcome;
      }
      FUZZ_CHECK(consumed > 0 && consumed <= buffer.size());
      if (status == ParseStatus::Complete) {
        FUZZ_CHECK(!request.args.empty());
        std::vector<std::string> args;
        for (auto arg : request.args) args.emplace_back(arg);
        if (!request.inline_form) {
          FUZZ_CHECK(request.raw.data() == buffer.data() && request.raw.size() == consumed);
          for (auto arg : request.args)
            FUZZ_CHECK(arg.data() >= buffer.data() &&
                       arg.data() + arg.size() <= buffer.data() + consumed);
        }
        outcome.requests.push_back(std::move(args));
      }
      buffer.erase(0, consumed);
    }
    if (fed == input.size()) return outcome;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the piece size; small limits make every limit reachable.
  std::size_t piece = data[0] % 8;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  RequestLimits limits{.max_args = 64, .max_bulk_bytes = 4096, .max_inline_bytes = 256};
  Outcome whole = parse(input, 0, limits);
  Outcome pieces = parse(input, piece == 0 ? 1 : piece, limits);
  FUZZ_CHECK(whole == pieces);
  return 0;
}
