#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace santral::whatif {

// The keys a report replays, each with how often it was accessed. A count of 0 is a key that is
// stored but not read or written in the traced period (it still counts for scans and moves).
// Keys live in one buffer: a lesson-sized trace holds twelve million of them.
class Trace {
 public:
  void reserve(std::size_t keys, std::size_t bytes);
  void add(std::string_view key, std::uint32_t count);

  std::size_t size() const { return counts_.size(); }
  std::string_view key(std::size_t i) const {
    std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(text_).substr(begin, ends_[i] - begin);
  }
  std::uint32_t count(std::size_t i) const { return counts_[i]; }
  std::uint64_t total_count() const;

 private:
  std::string text_;
  std::vector<std::size_t> ends_;
  std::vector<std::uint32_t> counts_;
};

// The trace file format: one key per line, optionally followed by blanks and a count of
// accesses (default 1). Blank lines and lines starting with '#' are skipped; keys cannot hold
// blanks. Throws std::runtime_error naming the file and line of a malformed count.
Trace read_trace(const std::filesystem::path& path);
Trace parse_trace(std::istream& in, const std::string& source);
void write_trace(std::ostream& out, const Trace& trace);

}  // namespace santral::whatif
