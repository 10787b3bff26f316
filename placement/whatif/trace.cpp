#include "placement/whatif/trace.h"

#include <charconv>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace santral::whatif {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

void Trace::reserve(std::size_t keys, std::size_t bytes) {
  text_.reserve(bytes);
  ends_.reserve(keys);
  counts_.reserve(keys);
}

void Trace::add(std::string_view key, std::uint32_t count) {
  text_.append(key);
  ends_.push_back(text_.size());
  counts_.push_back(count);
}

std::uint64_t Trace::total_count() const {
  return std::accumulate(counts_.begin(), counts_.end(), std::uint64_t{0});
}

Trace parse_trace(std::istream& in, const std::string& source) {
  Trace trace;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    auto split = text.find_first_of(" \t");
    std::string_view key = text.substr(0, split);
    std::uint32_t count = 1;
    if (split != std::string_view::npos) {
      std::string_view digits = trim(text.substr(split));
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
      if (ec != std::errc{} || end != digits.data() + digits.size())
        throw std::runtime_error(
            fmt::format("{}:{}: expected a key and an optional count of accesses, got \"{}\"",
                        source, number, text));
    }
    trace.add(key, count);
  }
  return trace;
}

Trace read_trace(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open the trace", path.string()));
  return parse_trace(in, path.string());
}

void write_trace(std::ostream& out, const Trace& trace) {
  std::string line;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    line.assign(trace.key(i));
    line += ' ';
    line += std::to_string(trace.count(i));
    line += '\n';
    out << line;
  }
}

}  // namespace santral::whatif
