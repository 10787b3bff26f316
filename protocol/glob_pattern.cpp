#include "protocol/glob_pattern.h"

#include <utility>

namespace santral::protocol {
namespace {

// A view that reads NUL past its end, as Redis's code reads an sds's terminator.
struct Cursor {
  const char* at;
  long left;
  char operator[](long i) const { return i < left ? at[i] : '\0'; }
  void skip(long n = 1) {
    at += n;
    left -= n;
  }
};

// Redis compares range bounds as (signed) chars.
int as_redis_char(char c) {
  return static_cast<signed char>(c);
}

bool match(Cursor pattern, Cursor text, bool& skip_longer, int nesting) {
  if (nesting > 1000) return false;  // Redis's guard against abusive patterns
  while (pattern.left > 0 && text.left > 0) {
    switch (pattern[0]) {
      case '*':
        while (pattern.left > 0 && pattern[1] == '*') pattern.skip();
        if (pattern.left == 1) return true;
        while (text.left > 0) {
          if (match(Cursor{pattern.at + 1, pattern.left - 1}, text, skip_longer, nesting + 1))
            return true;
          if (skip_longer) return false;
          text.skip();
        }
        // Nothing after this star matches anywhere in the rest: a longer match for an earlier
        // star cannot help either.
        skip_longer = true;
        return false;
      case '?':
        text.skip();
        break;
      case '[': {
        pattern.skip();
        bool negate = pattern[0] == '^';
        if (negate) pattern.skip();
        bool matched = false;
        while (true) {
          if (pattern[0] == '\\' && pattern.left >= 2) {
            pattern.skip();
            if (pattern[0] == text[0]) matched = true;
          } else if (pattern[0] == ']') {
            break;
          } else if (pattern.left == 0) {
            pattern.at--;
            pattern.left++;
            break;
          } else if (pattern.left >= 3 && pattern[1] == '-') {
            int start = as_redis_char(pattern[0]);
            int end = as_redis_char(pattern[2]);
            int c = as_redis_char(text[0]);
            if (start > end) std::swap(start, end);
            pattern.skip(2);
            if (c >= start && c <= end) matched = true;
          } else if (pattern[0] == text[0]) {
            matched = true;
          }
          pattern.skip();
        }
        if (negate) matched = !matched;
        if (!matched) return false;
        text.skip();
        break;
      }
      case '\\':
        if (pattern.left >= 2) pattern.skip();
        [[fallthrough]];
      default:
        if (pattern[0] != text[0]) return false;
        text.skip();
        break;
    }
    pattern.skip();
    if (text.left == 0) {
      while (pattern[0] == '*' && pattern.left > 0) pattern.skip();
      break;
    }
  }
  return pattern.left == 0 && text.left == 0;
}

}  // namespace

bool glob_matches(std::string_view pattern, std::string_view text) {
  bool skip_longer = false;
  return match(Cursor{pattern.data(), static_cast<long>(pattern.size())},
               Cursor{text.data(), static_cast<long>(text.size())}, skip_longer, 0);
}

}  // namespace santral::protocol
