#include "protocol/request_parser.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace santral::protocol {
namespace {

// Redis's string2ll(): an optional '-', no '+', no leading zeros (except "0" itself), no
// blanks, fewer than 21 characters, and within int64.
bool parse_redis_integer(const char* text, std::size_t size, std::int64_t& value) {
  if (size == 0 || size >= 21) return false;
  if (size == 1 && text[0] == '0') {
    value = 0;
    return true;
  }
  const bool negative = text[0] == '-';
  std::size_t i = negative ? 1 : 0;
  if (i == size || text[i] < '1' || text[i] > '9') return false;
  std::uint64_t magnitude = 0;
  for (; i < size; ++i) {
    const unsigned digit = static_cast<unsigned char>(text[i]) - unsigned{'0'};
    if (digit > 9) return false;
    if (__builtin_mul_overflow(magnitude, 10u, &magnitude) ||
        __builtin_add_overflow(magnitude, digit, &magnitude))
      return false;
  }
  constexpr auto int64_max = static_cast<std::uint64_t>(INT64_MAX);
  if (negative) {
    if (magnitude > int64_max + 1) return false;
    value = magnitude == int64_max + 1 ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
  } else {
    if (magnitude > int64_max) return false;
    value = static_cast<std::int64_t>(magnitude);
  }
  return true;
}

// Offset of the first `byte` at or after `from`, or npos.
std::size_t find_byte(std::string_view input, std::size_t from, char byte) {
  if (from >= input.size()) return std::string_view::npos;
  const void* hit = std::memchr(input.data() + from, byte, input.size() - from);
  if (hit == nullptr) return std::string_view::npos;
  return static_cast<std::size_t>(static_cast<const char*>(hit) - input.data());
}

// The shape nearly every count and length line has, `<type><digits>\r` plus one more byte,
// read in a single pass. Whatever else (a sign, a leading zero, 19+ digits, a line still
// arriving) is left to the general path, which gives the same answer more slowly.
bool read_plain_number(std::string_view input, std::size_t line_start, std::size_t& cr,
                       std::int64_t& value) {
  const std::size_t first = line_start + 1;
  const std::size_t limit = std::min(input.size(), first + 18);  // 18 digits fit in int64
  std::int64_t number = 0;
  std::size_t i = first;
  for (; i < limit; ++i) {
    const unsigned digit = static_cast<unsigned char>(input[i]) - unsigned{'0'};
    if (digit > 9) break;
    number = number * 10 + digit;
  }
  if (i == first || i + 1 >= input.size() || input[i] != '\r') return false;
  if (input[first] == '0' && i - first > 1) return false;
  cr = i;
  value = number;
  return true;
}

// isspace() in the "C" locale, which is what Redis runs its ctype calls in.
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// One argument of an inline line while it is being split. It stays a slice of the line as long
// as its bytes are contiguous there; a quote in the middle or an escape turns it into a copy.
class InlineToken {
 public:
  InlineToken(std::size_t start, std::string& unquoted) : begin_(start), unquoted_(unquoted) {}

  void take(std::string_view line, std::size_t at) {
    if (!copied_ && (length_ == 0 || begin_ + length_ == at)) {
      if (length_ == 0) begin_ = at;
      ++length_;
      return;
    }
    put(line, line[at]);
  }

  void put(std::string_view line, char byte) {
    if (!copied_) {
      copy_offset_ = unquoted_.size();
      unquoted_.append(line.substr(begin_, length_));
      copied_ = true;
    }
    unquoted_.push_back(byte);
  }

  std::size_t offset() const { return copied_ ? copy_offset_ : begin_; }
  std::size_t length() const { return copied_ ? unquoted_.size() - copy_offset_ : length_; }
  bool copied() const { return copied_; }

 private:
  std::size_t begin_;
  std::size_t length_ = 0;
  bool copied_ = false;
  std::size_t copy_offset_ = 0;
  std::string& unquoted_;
};

// Redis's sdssplitargs(), reading a length-delimited line instead of a C string: a NUL byte
// is an ordinary byte here, where Redis would stop at it. (A template only because Span is
// private to RequestParser.)
template <typename Span>
bool split_inline(std::string_view line, std::vector<Span>& spans, std::string& unquoted) {
  const std::size_t size = line.size();
  std::size_t i = 0;
  for (;;) {
    while (i < size && is_blank(line[i])) ++i;
    if (i == size) return true;

    InlineToken token(i, unquoted);
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      if (in_double) {
        if (i == size) return false;
        const char c = line[i];
        if (c == '\\' && i + 3 < size && line[i + 1] == 'x' && is_hex_digit(line[i + 2]) &&
            is_hex_digit(line[i + 3])) {
          token.put(line, static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < size) {
          ++i;
          switch (line[i]) {
            case 'n':
              token.put(line, '\n');
              break;
            case 'r':
              token.put(line, '\r');
              break;
            case 't':
              token.put(line, '\t');
              break;
            case 'b':
              token.put(line, '\b');
              break;
            case 'a':
              token.put(line, '\a');
              break;
            default:
              token.put(line, line[i]);
              break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a blank or the end of the line.
          if (i + 1 < size && !is_blank(line[i + 1])) return false;
          done = true;
        } else {
          token.take(line, i);
        }
      } else if (in_single) {
        if (i == size) return false;
        const char c = line[i];
        if (c == '\\' && i + 1 < size && line[i + 1] == '\'') {
          ++i;
          token.put(line, '\'');
        } else if (c == '\'') {
          if (i + 1 < size && !is_blank(line[i + 1])) return false;
          done = true;
        } else {
          token.take(line, i);
        }
      } else if (i == size) {
        done = true;
      } else {
        switch (line[i]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            token.take(line, i);
            break;
        }
      }
      if (i < size) ++i;
    }
    spans.push_back({token.offset(), token.length(), token.copied()});
  }
}

}  // namespace

RequestParser::RequestParser(const RequestLimits& limits) : limits_(limits) {}

ParseStatus RequestParser::parse(std::string_view input, Request& out, std::size_t& consumed) {
  consumed = 0;
  if (error_ != ProtocolError::None) return ParseStatus::Error;
  // Less input than last time breaks the caller's contract; waiting is the only safe answer.
  if (input.empty() || input.size() < pos_) return ParseStatus::NeedMore;
  if (stage_ == Stage::Start) {
    if (input[0] == '*') {
      stage_ = Stage::ArgCount;
      pos_ = 1;
    } else {
      stage_ = Stage::InlineLine;
      pos_ = 0;
    }
  }
  if (stage_ == Stage::InlineLine) return parse_inline(input, out, consumed);
  return parse_multibulk(input, out, consumed);
}

// Redis's processMultibulkBuffer(): a line ends at the first '\r', the byte after it must be
// present but is not looked at, and a bulk's two trailing bytes are skipped unread.
ParseStatus RequestParser::parse_multibulk(std::string_view input, Request& out,
                                           std::size_t& consumed) {
  for (;;) {
    if (stage_ == Stage::ArgCount) {
      std::size_t cr = 0;
      std::int64_t count = 0;
      if (pos_ != 1 || !read_plain_number(input, 0, cr, count)) {
        cr = find_byte(input, pos_, '\r');
        if (cr == std::string_view::npos) {
          if (input.size() > limits_.max_inline_bytes)
            return fail(ProtocolError::TooBigCountString);
          pos_ = input.size();
          return ParseStatus::NeedMore;
        }
        // The same limit whether the line came in one read or many (Redis applies it only
        // while the line is unfinished), so that any split of the stream parses alike.
        if (cr > limits_.max_inline_bytes) return fail(ProtocolError::TooBigCountString);
        if (cr + 1 >= input.size()) {
          pos_ = cr;
          return ParseStatus::NeedMore;
        }
        if (!parse_redis_integer(input.data() + 1, cr - 1, count))
          return fail(ProtocolError::InvalidMultibulkLength);
      }
      if (count > INT_MAX) return fail(ProtocolError::InvalidMultibulkLength);
      if (count > 0 && static_cast<std::uint64_t>(count) > limits_.max_args) {
        announced_ = count;
        return fail(ProtocolError::TooManyArguments);
      }
      if (count <= 0) {
        consumed = cr + 2;
        forget_progress();
        return ParseStatus::Empty;
      }
      args_expected_ = count;
      spans_.clear();
      spans_.reserve(static_cast<std::size_t>(std::min<std::int64_t>(count, 1024)));
      pos_ = line_start_ = cr + 2;
      stage_ = Stage::BulkLength;
    }

    if (stage_ == Stage::BulkLength) {
      std::size_t cr = 0;
      std::int64_t length = 0;
      const bool fresh_line = pos_ == line_start_ && line_start_ < input.size();
      if (!fresh_line || input[line_start_] != '$' ||
          !read_plain_number(input, line_start_, cr, length)) {
        cr = find_byte(input, pos_, '\r');
        if (cr == std::string_view::npos) {
          if (input.size() - line_start_ > limits_.max_inline_bytes)
            return fail(ProtocolError::TooBigBulkCountString);
          pos_ = input.size();
          return ParseStatus::NeedMore;
        }
        if (cr - line_start_ > limits_.max_inline_bytes)
          return fail(ProtocolError::TooBigBulkCountString);
        if (cr + 1 >= input.size()) {
          pos_ = cr;
          return ParseStatus::NeedMore;
        }
        if (input[line_start_] != '$') {
          unexpected_byte_ = input[line_start_];
          return fail(ProtocolError::ExpectedDollar);
        }
        if (!parse_redis_integer(input.data() + line_start_ + 1, cr - line_start_ - 1, length) ||
            length < 0)
          return fail(ProtocolError::InvalidBulkLength);
      }
      if (static_cast<std::uint64_t>(length) > limits_.max_bulk_bytes) {
        announced_ = length;
        return fail(ProtocolError::BulkTooLarge);
      }
      bulk_length_ = length;
      pos_ = cr + 2;
      stage_ = Stage::BulkData;
    }

    // Stage::BulkData: nothing in a payload is examined, so waiting for it costs nothing.
    const std::size_t available = input.size() - pos_;
    const auto length = static_cast<std::size_t>(bulk_length_);
    if (available < 2 || available - 2 < length) return ParseStatus::NeedMore;
    spans_.push_back({pos_, length, false});
    pos_ += length + 2;
    if (spans_.size() < static_cast<std::size_t>(args_expected_)) {
      line_start_ = pos_;
      stage_ = Stage::BulkLength;
      continue;
    }

    args_.clear();
    for (const Span& span : spans_) args_.emplace_back(input.data() + span.offset, span.length);
    out.args = args_;
    out.raw = input.substr(0, pos_);
    out.inline_form = false;
    consumed = pos_;
    forget_progress();
    return ParseStatus::Complete;
  }
}

// Redis's processInlineBuffer(): a line ends at '\n', minus a '\r' just before it.
ParseStatus RequestParser::parse_inline(std::string_view input, Request& out,
                                        std::size_t& consumed) {
  const std::size_t newline = find_byte(input, pos_, '\n');
  if (newline == std::string_view::npos) {
    if (input.size() > limits_.max_inline_bytes) return fail(ProtocolError::TooBigInline);
    pos_ = input.size();
    return ParseStatus::NeedMore;
  }
  if (newline > limits_.max_inline_bytes) return fail(ProtocolError::TooBigInline);
  std::size_t line_end = newline;
  if (line_end > 0 && input[line_end - 1] == '\r') --line_end;

  spans_.clear();
  unquoted_.clear();
  if (!split_inline(input.substr(0, line_end), spans_, unquoted_))
    return fail(ProtocolError::UnbalancedQuotes);
  if (spans_.empty()) {
    consumed = newline + 1;
    forget_progress();
    return ParseStatus::Empty;
  }
  if (spans_.size() > limits_.max_args) {
    announced_ = static_cast<std::int64_t>(spans_.size());
    return fail(ProtocolError::TooManyArguments);
  }

  args_.clear();
  for (const Span& span : spans_) {
    const char* base = span.unquoted ? unquoted_.data() : input.data();
    args_.emplace_back(base + span.offset, span.length);
  }
  out.args = args_;
  out.raw = {};
  out.inline_form = true;
  consumed = newline + 1;
  forget_progress();
  return ParseStatus::Complete;
}

ParseStatus RequestParser::fail(ProtocolError error) {
  error_ = error;
  forget_progress();
  return ParseStatus::Error;
}

void RequestParser::forget_progress() {
  stage_ = Stage::Start;
  pos_ = 0;
  line_start_ = 0;
  args_expected_ = 0;
  bulk_length_ = 0;
  spans_.clear();
}

void RequestParser::reset() {
  forget_progress();
  args_.clear();
  unquoted_.clear();
  error_ = ProtocolError::None;
  unexpected_byte_ = 0;
  announced_ = 0;
}

}  // namespace santral::protocol
