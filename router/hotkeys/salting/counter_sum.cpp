#include "router/hotkeys/salting/counter_sum.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "protocol/arguments.h"

namespace santral::router {

using protocol::ReplyValue;
using Type = ReplyValue::Type;

CounterSum::Status CounterSum::add(const ReplyValue& part) {
  if (part.type == Type::Null) return Status::Ok;
  std::int64_t value = 0;
  if (part.type == Type::Integer) {
    value = part.integer;
  } else if (part.type == Type::BulkString || part.type == Type::SimpleString ||
             part.type == Type::Double) {
    if (auto integer = protocol::parse_integer<std::int64_t>(part.text)) {
      value = *integer;
    } else {
      std::string text(part.text);
      char* stop = nullptr;
      errno = 0;
      long double real = std::strtold(text.c_str(), &stop);
      if (text.empty() || stop != text.c_str() + text.size() || errno == ERANGE || std::isnan(real))
        return Status::NotNumber;
      any_ = true;
      if (!floating_) real_ = static_cast<long double>(integer_);
      floating_ = true;
      real_ += real;
      return Status::Ok;
    }
  } else {
    return Status::NotNumber;
  }
  any_ = true;
  if (floating_) {
    real_ += static_cast<long double>(value);
    return Status::Ok;
  }
  if (__builtin_add_overflow(integer_, value, &integer_)) return Status::Overflow;
  return Status::Ok;
}

CounterSum::Status CounterSum::scale(std::uint32_t factor) {
  if (floating_) {
    real_ *= factor;
    return Status::Ok;
  }
  if (__builtin_mul_overflow(integer_, static_cast<std::int64_t>(factor), &integer_))
    return Status::Overflow;
  return Status::Ok;
}

std::string CounterSum::text() const {
  if (!floating_) return std::to_string(integer_);
  // Redis's ld2string in "human" mode: %.17Lf, then trailing zeros and dot removed.
  char buffer[5 * 1024];
  int length = std::snprintf(buffer, sizeof buffer, "%.17Lf", real_);
  if (length <= 0 || static_cast<std::size_t>(length) >= sizeof buffer) return "0";
  std::string out(buffer, static_cast<std::size_t>(length));
  if (out.find('.') != std::string::npos) {
    while (!out.empty() && out.back() == '0') out.pop_back();
    if (!out.empty() && out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

}  // namespace santral::router
