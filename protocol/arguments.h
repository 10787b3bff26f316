#pragma once

#include <strings.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace santral::protocol {

// Small readers of command arguments, shared by every command that parses its own options.

// ASCII case-insensitive equality, as Redis compares option names.
inline bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Whether any argument is `option` (XREAD ... BLOCK, SCAN ... MATCH).
inline bool has_option(std::span<const std::string_view> args, std::string_view option) {
  for (std::string_view arg : args)
    if (equals_nocase(arg, option)) return true;
  return false;
}

// The whole text as a decimal integer; nullopt when it is not one (or does not fit).
template <typename Integer = long long>
std::optional<Integer> parse_integer(std::string_view text) {
  Integer value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The whole text as a decimal number in (above, most]; nullopt when it is not one, or outside.
inline std::optional<double> parse_number_in(std::string_view text, double above, double most) {
  auto value = parse_integer<double>(text);
  if (!value || !(*value > above) || *value > most) return std::nullopt;
  return value;
}

}  // namespace santral::protocol
