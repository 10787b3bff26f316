#include "router/analysis/key_values.h"

#include <charconv>

namespace santral::router {

KeyValues KeyValues::field(const config::KeyPattern& pattern, int index) {
  KeyValues out;
  out.pattern_ = &pattern;
  out.field_ = index;
  int seen = 0;
  for (const auto& segment : pattern.segments())
    if (segment.field && seen++ == index) out.name_ = "{" + segment.text + "}";
  return out;
}

KeyValues KeyValues::regex(const std::string& expression) {
  KeyValues out;
  out.regex_ = std::make_shared<const std::regex>(expression, std::regex::ECMAScript);
  out.name_ = "regex " + expression;
  return out;
}

KeyValues KeyValues::hashed_part(const placement::ShardMap& map) {
  KeyValues out;
  out.map_ = &map;
  out.name_ = "the key (its hash tag when it has one)";
  return out;
}

std::optional<std::string_view> KeyValues::of(std::string_view key) const {
  if (pattern_ != nullptr) {
    std::string_view value;
    if (!pattern_->match(key, field_, &value)) return std::nullopt;
    return value;
  }
  if (regex_) {
    std::match_results<std::string_view::const_iterator> found;
    if (!std::regex_search(key.begin(), key.end(), found, *regex_)) return std::nullopt;
    const auto& part = found.size() > 1 && found[1].matched ? found[1] : found[0];
    auto begin = static_cast<std::size_t>(part.first - key.begin());
    auto value = key.substr(begin, static_cast<std::size_t>(part.length()));
    if (value.empty()) return std::nullopt;
    return value;
  }
  return map_->hashed_part(key);
}

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  if (text.empty() || text.front() == '+') return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace santral::router
