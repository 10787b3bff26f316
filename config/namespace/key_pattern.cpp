#include "config/namespace/key_pattern.h"

#include <cctype>

namespace santral::config {
namespace {

bool field_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

}  // namespace

std::optional<KeyPattern> KeyPattern::compile(std::string_view text, std::string& problem) {
  KeyPattern pattern;
  pattern.text_ = std::string(text);
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '}') {
      problem = "'}' without a '{' before it (fields are written {name})";
      return std::nullopt;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    auto close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      problem = "'{' without a closing '}'";
      return std::nullopt;
    }
    std::string name(text.substr(i + 1, close - i - 1));
    if (name.empty()) {
      problem = "a field needs a name, like {id}";
      return std::nullopt;
    }
    for (char n : name)
      if (!field_name_char(n)) {
        problem = "field name '" + name + "' may use only letters, digits, '_' and '-'";
        return std::nullopt;
      }
    if (literal.empty() && !pattern.segments_.empty()) {
      problem = "fields {" + pattern.segments_.back().text + "} and {" + name +
                "} must be separated by literal text";
      return std::nullopt;
    }
    for (const auto& s : pattern.segments_)
      if (s.field && s.text == name) {
        problem = "field {" + name + "} appears twice";
        return std::nullopt;
      }
    if (!literal.empty()) pattern.segments_.push_back({false, std::move(literal)});
    literal.clear();
    pattern.segments_.push_back({true, std::move(name)});
    ++pattern.field_count_;
    i = close;
  }
  if (!literal.empty()) pattern.segments_.push_back({false, std::move(literal)});
  if (pattern.segments_.empty()) {
    problem = "must not be empty";
    return std::nullopt;
  }
  return pattern;
}

bool KeyPattern::match(std::string_view key, int field, std::string_view* value) const {
  std::size_t end = key.size();
  std::size_t last = segments_.size();
  // A trailing literal is anchored at the end of the key.
  if (!segments_.back().field && segments_.size() > 1) {
    const auto& tail = segments_.back().text;
    if (key.size() < tail.size() || key.substr(key.size() - tail.size()) != tail) return false;
    end = key.size() - tail.size();
    --last;
  }
  std::string_view body = key.substr(0, end);
  std::size_t pos = 0;
  int field_number = -1;
  for (std::size_t s = 0; s < last; ++s) {
    const Segment& seg = segments_[s];
    if (!seg.field) {
      if (body.substr(pos, seg.text.size()) != seg.text) return false;
      pos += seg.text.size();
      continue;
    }
    ++field_number;
    std::size_t stop = body.size();
    if (s + 1 < last) {
      stop = body.find(segments_[s + 1].text, pos + 1);
      if (stop == std::string_view::npos) return false;
    } else if (pos >= body.size()) {
      return false;  // a field is at least one character
    }
    if (field_number == field && value != nullptr) *value = body.substr(pos, stop - pos);
    pos = stop;
  }
  return pos == body.size();
}

std::optional<std::vector<std::string_view>> KeyPattern::fields(std::string_view key) const {
  std::vector<std::string_view> values(field_count_);
  for (std::size_t f = 0; f < field_count_; ++f)
    if (!match(key, static_cast<int>(f), &values[f])) return std::nullopt;
  if (field_count_ == 0 && !match(key)) return std::nullopt;
  return values;
}

int KeyPattern::field_index(std::string_view name) const {
  int index = 0;
  for (const auto& s : segments_) {
    if (!s.field) continue;
    if (s.text == name) return index;
    ++index;
  }
  return -1;
}

std::string_view KeyPattern::leading_literal() const {
  return segments_.front().field ? std::string_view() : std::string_view(segments_.front().text);
}

std::string KeyPattern::sample_key(char filler) const {
  std::string key;
  for (const auto& s : segments_) key += s.field ? std::string(1, filler) : s.text;
  return key;
}

}  // namespace santral::config
