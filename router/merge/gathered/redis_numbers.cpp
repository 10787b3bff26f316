#include "router/merge/gathered/redis_numbers.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace santral::router {

std::optional<std::int64_t> redis_integer(std::string_view text) {
  constexpr std::size_t kLongStrSize = 21;
  if (text.empty() || text.size() >= kLongStrSize) return std::nullopt;
  if (text == "0") return 0;
  std::size_t i = 0;
  bool negative = text[0] == '-';
  if (negative && ++i == text.size()) return std::nullopt;
  if (text[i] < '1' || text[i] > '9') return std::nullopt;
  unsigned long long v = static_cast<unsigned long long>(text[i++] - '0');
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (v > ULLONG_MAX / 10) return std::nullopt;
    v *= 10;
    auto digit = static_cast<unsigned long long>(text[i] - '0');
    if (v > ULLONG_MAX - digit) return std::nullopt;
    v += digit;
  }
  if (i < text.size()) return std::nullopt;
  if (negative) {
    if (v > static_cast<unsigned long long>(-(LLONG_MIN + 1)) + 1) return std::nullopt;
    return static_cast<std::int64_t>(0 - v);
  }
  if (v > static_cast<unsigned long long>(LLONG_MAX)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<double> redis_double(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  std::string copy(text);  // strtod needs the terminating NUL
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(copy.c_str(), &end);
  if (static_cast<std::size_t>(end - copy.c_str()) != copy.size()) return std::nullopt;
  if (errno == ERANGE &&
      (value == HUGE_VAL || value == -HUGE_VAL || std::fpclassify(value) == FP_ZERO))
    return std::nullopt;
  if (std::isnan(value)) return std::nullopt;
  return value;
}

void append_redis_double(std::string& out, double value, int protocol) {
  if (std::isinf(value)) {
    if (protocol == 2)
      out.append(value > 0 ? "$3\r\ninf\r\n" : "$4\r\n-inf\r\n");
    else
      out.append(value > 0 ? ",inf\r\n" : ",-inf\r\n");
    return;
  }
  char digits[64];
  int length = std::snprintf(digits, sizeof(digits), "%.17g", value);
  if (protocol == 2) {
    out.push_back('$');
    out.append(std::to_string(length));
    out.append("\r\n");
  } else {
    out.push_back(',');
  }
  out.append(digits, static_cast<std::size_t>(length));
  out.append("\r\n");
}

}  // namespace santral::router
