#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace santral::config {

// A namespace's `match:` pattern, compiled: literal text and {field} placeholders. A field
// matches one or more characters, lazily up to the next literal (regex (.+?)); a final field
// takes the rest of the key (.+); the whole key must match.
//
// Because two fields are always separated by literal text, the lazy choice is simply the
// first occurrence of each literal: if the rest of the pattern cannot match after the first
// occurrence it cannot match after a later one either (the next field can absorb the extra
// text), so matching needs no backtracking, is linear, and never allocates. A literal that ends
// the pattern is anchored at the end of the key.
class KeyPattern {
 public:
  struct Segment {
    bool field = false;
    std::string text;  // the literal, or the field's name
  };

  // Compiles `text`; nullopt with `problem` set when it is malformed.
  static std::optional<KeyPattern> compile(std::string_view text, std::string& problem);

  // True when the whole key matches; `field` >= 0 also yields that field's text.
  bool match(std::string_view key, int field = -1, std::string_view* value = nullptr) const;
  // Every field's text, in order (for place() and tests).
  std::optional<std::vector<std::string_view>> fields(std::string_view key) const;

  int field_index(std::string_view name) const;  // -1 when there is no such field
  std::size_t field_count() const { return field_count_; }
  const std::vector<Segment>& segments() const { return segments_; }
  const std::string& text() const { return text_; }
  // The literal text the pattern starts with ("" when it starts with a field).
  std::string_view leading_literal() const;
  // A key of this pattern with every field replaced by `filler`.
  std::string sample_key(char filler) const;

 private:
  std::string text_;
  std::vector<Segment> segments_;
  std::size_t field_count_ = 0;
};

}  // namespace santral::config
