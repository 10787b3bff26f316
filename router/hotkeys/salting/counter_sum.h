#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/reply_value.h"

namespace santral::router {

// Adds up the sub-keys of a salted counter as Redis reads numbers: integers while every part
// is one, long double (as INCRBYFLOAT) once any part is not. A missing sub-key counts as 0.
class CounterSum {
 public:
  enum class Status { Ok, NotNumber, Overflow };

  // A GET reply (bulk or nil), or an INCR-family reply (integer, or INCRBYFLOAT's bulk).
  Status add(const protocol::ReplyValue& part);
  // Every part was nil.
  bool missing() const { return !any_; }
  bool integral() const { return !floating_; }
  std::int64_t integer() const { return integer_; }
  // As Redis writes INCRBYFLOAT's result: no exponent, no trailing zeros.
  std::string text() const;
  // The sum multiplied by `factor` (a write's estimate of its counter); Overflow when an
  // integral product does not fit.
  Status scale(std::uint32_t factor);

 private:
  bool any_ = false;
  bool floating_ = false;
  std::int64_t integer_ = 0;
  long double real_ = 0;
};

}  // namespace santral::router
