#pragma once

#include <string_view>
#include <vector>

namespace santral::router {

// Reading Redis's INFO text:
//
//   # Server\r\n
//   redis_version:7.0.15\r\n
//   \r\n
//   # Keyspace\r\n
//   db0:keys=10,expires=2,avg_ttl=1234\r\n
//
// Views point into the text.
struct InfoLine {
  std::string_view key;    // the whole line when it has no ':'
  std::string_view value;  // after the first ':'
  bool has_value = false;
};

struct InfoSection {
  std::string_view name;  // "Server"; empty for lines before the first header
  std::vector<InfoLine> lines;
};

// "keys=10,expires=2" -> {keys, 10}, {expires, 2}
struct InfoSubfield {
  std::string_view name;
  std::string_view value;
};

inline std::vector<InfoSection> parse_info_text(std::string_view text) {
  std::vector<InfoSection> sections;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.front() == '#') {
      line.remove_prefix(1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      sections.push_back({line, {}});
      continue;
    }
    if (sections.empty()) sections.push_back({});
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      sections.back().lines.push_back({line, {}, false});
    else
      sections.back().lines.push_back({line.substr(0, colon), line.substr(colon + 1), true});
  }
  return sections;
}

inline std::vector<InfoSubfield> split_subfields(std::string_view value) {
  std::vector<InfoSubfield> subfields;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view part = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    const std::size_t equals = part.find('=');
    if (equals == std::string_view::npos)
      subfields.push_back({part, {}});
    else
      subfields.push_back({part.substr(0, equals), part.substr(equals + 1)});
  }
  return subfields;
}

inline const InfoSection* find_info_section(const std::vector<InfoSection>& sections,
                                            std::string_view name) {
  for (const InfoSection& section : sections)
    if (section.name == name) return &section;
  return nullptr;
}

// The value of `key` in whichever section has it; empty if none does.
inline std::string_view find_info_field(const std::vector<InfoSection>& sections,
                                        std::string_view key) {
  for (const InfoSection& section : sections)
    for (const InfoLine& line : section.lines)
      if (line.has_value && line.key == key) return line.value;
  return {};
}

}  // namespace santral::router
