#include "protocol/reply_value.h"

#include <charconv>
#include <cstring>

namespace santral::protocol {
namespace {

// The smallest element a frame can hold is three bytes (`_\r\n`, `+\r\n`), so a count larger
// than a third of what is left is a lie; checking it keeps reserve() and the counters sane.
constexpr std::size_t smallest_element = 3;

bool to_int64(std::string_view text, std::int64_t& value) {
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  return !text.empty() && ec == std::errc{} && stop == end;
}

class FrameReader {
 public:
  explicit FrameReader(std::string_view frame) : frame_(frame) {}

  // `<type><line>\r\n`
  bool header(char& type, std::string_view& line) {
    if (pos_ >= frame_.size()) return false;
    const void* hit = std::memchr(frame_.data() + pos_, '\r', frame_.size() - pos_);
    if (hit == nullptr) return false;
    const auto cr = static_cast<std::size_t>(static_cast<const char*>(hit) - frame_.data());
    if (cr == pos_ || cr + 1 >= frame_.size() || frame_[cr + 1] != '\n') return false;
    type = frame_[pos_];
    line = frame_.substr(pos_ + 1, cr - pos_ - 1);
    pos_ = cr + 2;
    return true;
  }

  // `length` bytes followed by \r\n
  bool payload(std::int64_t length, std::string_view& text) {
    const std::size_t left = frame_.size() - pos_;
    if (length < 0 || left < 2 || left - 2 < static_cast<std::uint64_t>(length)) return false;
    const auto size = static_cast<std::size_t>(length);
    if (frame_[pos_ + size] != '\r' || frame_[pos_ + size + 1] != '\n') return false;
    text = frame_.substr(pos_, size);
    pos_ += size + 2;
    return true;
  }

  bool plausible_count(std::int64_t count) const {
    return count >= 0 &&
           static_cast<std::uint64_t>(count) <= (frame_.size() - pos_) / smallest_element;
  }

  bool at_end() const { return pos_ == frame_.size(); }

 private:
  std::string_view frame_;
  std::size_t pos_ = 0;
};

bool is_blob(char type) {
  return type == '$' || type == '!' || type == '=';
}

bool is_aggregate(char type) {
  return type == '*' || type == '~' || type == '>' || type == '%' || type == '|';
}

bool is_line(char type) {
  return type == '+' || type == '-' || type == ':' || type == '_' || type == ',' || type == '#' ||
         type == '(';
}

// Elements an aggregate header announces: a map or an attribute holds n pairs.
bool element_count(FrameReader& reader, char type, std::string_view line, std::int64_t& count) {
  if (!to_int64(line, count)) return false;
  if (type == '%' || type == '|') {
    if (count < 0 || count > INT64_MAX / 2) return false;
    count *= 2;
  }
  return reader.plausible_count(count);
}

// Skips `count` values without building them; an aggregate only adds to the count, so no
// stack is needed however deep the values nest.
bool skip_values(FrameReader& reader, std::int64_t count) {
  while (count > 0) {
    --count;
    char type = 0;
    std::string_view line;
    if (!reader.header(type, line)) return false;
    if (is_line(type)) continue;
    if (is_blob(type)) {
      std::int64_t length = 0;
      std::string_view ignored;
      if (!to_int64(line, length)) return false;
      if (type == '$' && length == -1) continue;
      if (!reader.payload(length, ignored)) return false;
      continue;
    }
    if (!is_aggregate(type)) return false;
    std::int64_t elements = 0;
    if (type == '*' && line == "-1") continue;
    if (!element_count(reader, type, line, elements)) return false;
    if (type == '|') ++elements;  // an attribute is followed by the value it annotates
    count += elements;
  }
  return true;
}

// Reads the value that fills `slot` (skipping attributes in front of it). `children` is how
// many elements of an aggregate follow.
bool read_value(FrameReader& reader, ReplyValue& slot, std::int64_t& children) {
  children = 0;
  char type = 0;
  std::string_view line;
  for (;;) {
    if (!reader.header(type, line)) return false;
    if (type != '|') break;
    std::int64_t elements = 0;
    if (!element_count(reader, type, line, elements) || !skip_values(reader, elements))
      return false;
  }

  switch (type) {
    case '+':
    case '-':
    case ',':
    case '(':
      slot.type = static_cast<ReplyValue::Type>(type);
      slot.text = line;
      return true;
    case ':':
      slot.type = ReplyValue::Type::Integer;
      slot.text = line;  // as sent, so that re-encoding gives back the same bytes
      return to_int64(line, slot.integer);
    case '#':
      slot.type = ReplyValue::Type::Boolean;
      if (line != "t" && line != "f") return false;
      slot.integer = line == "t" ? 1 : 0;
      return true;
    case '_':
      slot.type = ReplyValue::Type::Null;
      return line.empty();
    case '$':
    case '!':
    case '=': {
      std::int64_t length = 0;
      if (!to_int64(line, length)) return false;
      if (type == '$' && length == -1) {
        slot.type = ReplyValue::Type::Null;
        slot.resp2_null = '$';
        return true;
      }
      slot.type = static_cast<ReplyValue::Type>(type);
      if (!reader.payload(length, slot.text)) return false;
      // A verbatim string is `fmt:text`, with a three-letter format.
      return type != '=' || (slot.text.size() >= 4 && slot.text[3] == ':');
    }
    case '*':
    case '~':
    case '>':
    case '%': {
      if (type == '*' && line == "-1") {
        slot.type = ReplyValue::Type::Null;
        slot.resp2_null = '*';
        return true;
      }
      if (!element_count(reader, type, line, children)) return false;
      slot.type = static_cast<ReplyValue::Type>(type);
      slot.elements.reserve(static_cast<std::size_t>(children));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

// Iterative, so a deeply nested reply cannot exhaust the stack. Every aggregate's elements are
// reserved up front, so the pointers to open aggregates stay valid while they fill.
bool parse_reply(std::string_view frame, ReplyValue& out) {
  out = ReplyValue{};
  FrameReader reader(frame);
  struct OpenAggregate {
    ReplyValue* node;
    std::int64_t remaining;
  };
  std::vector<OpenAggregate> open;
  ReplyValue* slot = &out;
  while (slot != nullptr) {
    std::int64_t children = 0;
    if (!read_value(reader, *slot, children)) return false;
    if (children > 0) open.push_back({slot, children});

    slot = nullptr;
    while (!open.empty() && slot == nullptr) {
      OpenAggregate& top = open.back();
      if (top.remaining == 0) {
        open.pop_back();
        continue;
      }
      --top.remaining;
      slot = &top.node->elements.emplace_back();
    }
  }
  return reader.at_end();
}

}  // namespace santral::protocol
