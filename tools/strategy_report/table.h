#pragma once

#include <string>
#include <vector>

namespace santral::strategy_report {

// Rows of text cells, printed as aligned columns or as a Markdown table (for docs/moves.md).
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string text() const;      // first column left-aligned, the others right-aligned
  std::string markdown() const;  // the same alignment, as | --- | ---: |

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// 12000000 -> "12,000,000".
std::string with_commas(unsigned long long value);

}  // namespace santral::strategy_report
