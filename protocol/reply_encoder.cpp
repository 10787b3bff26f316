#include "protocol/reply_encoder.h"

#include <charconv>
#include <vector>

namespace santral::protocol {
namespace {

using Type = ReplyValue::Type;

void append_line(std::string& out, char type, std::string_view text) {
  out.push_back(type);
  out.append(text);
  out.append("\r\n", 2);
}

void append_number(std::string& out, char type, std::int64_t number) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, number);
  append_line(out, type, std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void append_blob(std::string& out, char type, std::string_view text) {
  append_number(out, type, static_cast<std::int64_t>(text.size()));
  out.append(text);
  out.append("\r\n", 2);
}

bool is_aggregate(Type type) {
  return type == Type::Array || type == Type::Set || type == Type::Push || type == Type::Map ||
         type == Type::Attribute;
}

// Everything but an aggregate's elements.
void encode_header(const ReplyValue& value, std::string& out) {
  const char type = static_cast<char>(value.type);
  switch (value.type) {
    case Type::SimpleString:
    case Type::Error:
    case Type::Double:
    case Type::BigNumber:
      append_line(out, type, value.text);
      return;
    case Type::Integer:
      if (value.text.empty()) {
        append_number(out, type, value.integer);
      } else {
        append_line(out, type, value.text);
      }
      return;
    case Type::Boolean:
      append_line(out, type, value.integer != 0 ? "t" : "f");
      return;
    case Type::Null:
      if (value.resp2_null != 0)
        append_line(out, value.resp2_null, "-1");
      else
        append_line(out, type, "");
      return;
    case Type::BulkString:
    case Type::BlobError:
    case Type::VerbatimString:
      append_blob(out, type, value.text);
      return;
    case Type::Array:
    case Type::Set:
    case Type::Push:
      append_number(out, type, static_cast<std::int64_t>(value.elements.size()));
      return;
    case Type::Map:
    case Type::Attribute:
      append_number(out, type, static_cast<std::int64_t>(value.elements.size() / 2));
      return;
  }
}

}  // namespace

// Iterative like parse_reply(), so a deeply nested value cannot exhaust the stack.
void encode_reply(const ReplyValue& value, std::string& out) {
  struct OpenAggregate {
    const ReplyValue* node;
    std::size_t next;
  };
  std::vector<OpenAggregate> open;
  const ReplyValue* current = &value;
  while (current != nullptr) {
    encode_header(*current, out);
    if (is_aggregate(current->type) && !current->elements.empty()) open.push_back({current, 0});

    current = nullptr;
    while (!open.empty() && current == nullptr) {
      OpenAggregate& top = open.back();
      if (top.next == top.node->elements.size()) {
        open.pop_back();
        continue;
      }
      current = &top.node->elements[top.next++];
    }
  }
}

}  // namespace santral::protocol
