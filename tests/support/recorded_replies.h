#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "router/backend/reply_sink.h"

namespace santral::test {

// A sink that keeps every reply it is given, in order: where a unit test's own requests to a
// connection answer.
class RecordedReplies final : public router::ReplySink {
 public:
  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view reply) override {
    got.emplace_back(reply);
  }
  std::vector<std::string> got;
};

}  // namespace santral::test
