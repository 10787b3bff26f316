#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace santral::router {

// Turns the replies of the fragments of one split or broadcast request into the one reply the
// client gets. Fragments may arrive in any order.
class ReplyMerge {
 public:
  virtual ~ReplyMerge() = default;
  virtual void add(std::uint32_t fragment, std::string_view reply) = 0;
  // Called once, after every fragment was added: append the client's reply to `out`.
  virtual void finish(std::string& out) = 0;
};

}  // namespace santral::router
