#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace santral::protocol {

// A reply decoded into a tree, for the few places that must look inside one (merging the
// fragments of a split command, reading a health-check answer). Forwarding never builds this.
struct ReplyValue {
  enum class Type : char {
    SimpleString = '+',
    Error = '-',
    Integer = ':',
    BulkString = '$',
    Array = '*',
    Null = '_',
    Double = ',',
    Boolean = '#',
    BlobError = '!',
    VerbatimString = '=',
    BigNumber = '(',
    Map = '%',
    Set = '~',
    Push = '>',
    Attribute = '|',
  };
  Type type = Type::Null;
  std::string_view text;             // strings, errors, numbers and doubles, as sent
  std::int64_t integer = 0;          // Integer; Boolean as 0/1
  std::vector<ReplyValue> elements;  // aggregates; a Map holds key, value, key, value, ...
  // A RESP2 null bulk (`$-1`) or null array (`*-1`) is Type::Null with `resp2_null` set to the
  // type byte it came with, so it can be written back unchanged.
  char resp2_null = 0;

  bool is_error() const { return type == Type::Error || type == Type::BlobError; }

  ReplyValue() = default;
  ReplyValue(ReplyValue&&) noexcept = default;
  ReplyValue& operator=(ReplyValue&&) noexcept = default;
  ReplyValue(const ReplyValue&) = default;
  ReplyValue& operator=(const ReplyValue&) = default;
  // Frees nested elements without recursion: a shard reply nested a million deep must not
  // overflow Santral's stack.
  ~ReplyValue() {
    if (elements.empty()) return;
    std::vector<ReplyValue> pending = std::move(elements);
    while (!pending.empty()) {
      ReplyValue last = std::move(pending.back());
      pending.pop_back();
      for (auto& child : last.elements) pending.push_back(std::move(child));
      last.elements.clear();
    }
  }
};

// Decodes one complete frame (as delimited by ReplyScanner). Returns false if it is malformed.
// An attribute (`|`) in front of a value is skipped: `out` is the value it annotates.
// Views point into `frame`.
bool parse_reply(std::string_view frame, ReplyValue& out);

}  // namespace santral::protocol
