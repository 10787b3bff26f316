#pragma once

#include <span>
#include <string_view>

namespace santral::protocol {

// One client request as the parser found it. The arguments are views into the connection's
// read buffer: they stay valid until that buffer is compacted, which is after dispatch.
struct Request {
  std::span<const std::string_view> args;
  // The exact bytes of a multibulk request, forwarded to a backend as they came. Empty for
  // an inline request, which has to be re-encoded as multibulk before it is forwarded.
  std::string_view raw;
  bool inline_form = false;

  std::string_view name() const { return args.empty() ? std::string_view{} : args.front(); }
};

}  // namespace santral::protocol
