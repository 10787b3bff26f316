#include "tools/strategy_report/table.h"

#include <algorithm>

#include <fmt/format.h>

namespace santral::strategy_report {

std::string Table::text() const {
  std::vector<std::size_t> width(header_.size());
  auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      if (c == 0)
        out += fmt::format("{:<{}}", row[c], width[c]);
      else
        out += fmt::format("  {:>{}}", row[c], width[c]);
    }
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string Table::markdown() const {
  auto line = [](const std::vector<std::string>& row) {
    std::string out = "|";
    for (const auto& cell : row) out += " " + cell + " |";
    return out + "\n";
  };
  std::string out = line(header_) + "|";
  for (std::size_t c = 0; c < header_.size(); ++c) out += c == 0 ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string with_commas(unsigned long long value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace santral::strategy_report
