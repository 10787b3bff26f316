#include "protocol/reply_scanner.h"

#include <algorithm>
#include <cstring>

namespace santral::protocol {
namespace {

// A length or count as Redis writes one: digits, or "-1" for a null.
bool parse_length(const char* text, std::size_t size, std::int64_t& value) {
  if (size == 2 && text[0] == '-' && text[1] == '1') {
    value = -1;
    return true;
  }
  if (size == 0 || size > 18) return false;  // 18 digits cannot overflow int64
  std::int64_t number = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const unsigned digit = static_cast<unsigned char>(text[i]) - unsigned{'0'};
    if (digit > 9) return false;
    number = number * 10 + digit;
  }
  value = number;
  return true;
}

}  // namespace

// Only framing is checked here (type bytes, lengths, CRLFs); what a line says is parse_reply's
// business. An attribute is not an element of its own:
//
//   |1 key val +OK        top level: the attribute's 2 elements are skipped, then the frame
//                         is the value that follows, and frame_type() is '+'
//   *2 :1 |1 k v :2       nested: the attribute and the value it annotates fill one slot,
//                         so it is counted as 2n + 1 elements
ScanStatus ReplyScanner::scan(std::string_view input, std::size_t& frame_size) {
  frame_size = 0;
  const char* data = input.data();
  const std::size_t size = input.size();
  if (size < pos_) return ScanStatus::NeedMore;  // the caller broke the contract: wait

  for (;;) {
    if (bulk_remaining_ >= 0) {
      const std::size_t available = size - pos_;
      if (available < static_cast<std::uint64_t>(bulk_remaining_)) {
        bulk_remaining_ -= static_cast<std::int64_t>(available);
        pos_ = size;
        return ScanStatus::NeedMore;
      }
      pos_ += static_cast<std::size_t>(bulk_remaining_);
      bulk_remaining_ = -1;
      if (data[pos_ - 2] != '\r' || data[pos_ - 1] != '\n') return fail();
      if (element_done()) break;
      continue;
    }

    if (pos_ >= size) return ScanStatus::NeedMore;
    const std::size_t from = std::max(pos_ + 1, line_scanned_);
    const void* hit = from < size ? std::memchr(data + from, '\r', size - from) : nullptr;
    if (hit == nullptr) {
      line_scanned_ = std::max(from, size);
      return ScanStatus::NeedMore;
    }
    const auto cr = static_cast<std::size_t>(static_cast<const char*>(hit) - data);
    if (cr + 1 >= size) {
      line_scanned_ = cr;
      return ScanStatus::NeedMore;
    }
    if (data[cr + 1] != '\n') return fail();

    const char type = data[pos_];
    const char* body = data + pos_ + 1;
    const std::size_t body_size = cr - pos_ - 1;
    pos_ = cr + 2;
    line_scanned_ = 0;

    bool frame_done = false;
    switch (type) {
      case '+':
      case '-':
      case ':':
      case '_':
      case ',':
      case '#':
      case '(':
        if (pending_.empty()) top_type_ = type;
        frame_done = element_done();
        break;

      case '$':
      case '!':
      case '=': {
        std::int64_t length = 0;
        if (!parse_length(body, body_size, length)) return fail();
        if (length == -1 && type != '$') return fail();
        if (pending_.empty()) top_type_ = type;
        if (length == -1) {
          frame_done = element_done();
        } else {
          bulk_remaining_ = length + 2;
        }
        break;
      }

      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        std::int64_t count = 0;
        if (!parse_length(body, body_size, count)) return fail();
        if (count == -1 && type != '*') return fail();
        const std::int64_t elements = (type == '%' || type == '|') ? count * 2 : count;
        if (type == '|') {
          if (!pending_.empty()) {
            pending_.push_back(elements + 1);
          } else if (elements > 0) {
            pending_.push_back(elements);
          }
          break;
        }
        if (pending_.empty()) top_type_ = type;
        if (elements > 0) {
          pending_.push_back(elements);
        } else {
          frame_done = element_done();
        }
        break;
      }

      default:
        return fail();
    }
    if (frame_done) break;
  }

  frame_size = pos_;
  const char type = top_type_;
  reset();
  frame_type_ = type;
  return ScanStatus::Complete;
}

// Counts one finished element against the open aggregates. True when that finished the frame;
// false too when what finished was a top-level attribute, as its value is still to come.
bool ReplyScanner::element_done() {
  while (!pending_.empty()) {
    if (--pending_.back() > 0) return false;
    pending_.pop_back();
  }
  return top_type_ != 0;
}

ScanStatus ReplyScanner::fail() {
  reset();
  return ScanStatus::Error;
}

void ReplyScanner::reset() {
  pos_ = 0;
  line_scanned_ = 0;
  pending_.clear();
  bulk_remaining_ = -1;
  top_type_ = 0;
}

std::string line_text(std::string_view frame) {
  if (!frame.empty() && (frame.front() == '-' || frame.front() == '+')) frame.remove_prefix(1);
  while (!frame.empty() && (frame.back() == '\n' || frame.back() == '\r')) frame.remove_suffix(1);
  return std::string(frame);
}

}  // namespace santral::protocol
