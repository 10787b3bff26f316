#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace santral::protocol {

// Whether a whole reply frame is an error: a simple error (-) or a RESP3 blob error (!).
constexpr bool is_error_frame(std::string_view frame) {
  return !frame.empty() && (frame.front() == '-' || frame.front() == '!');
}

// A simple or error reply's text: "-ERR x\r\n" -> "ERR x", "+OK\r\n" -> "OK".
std::string line_text(std::string_view frame);

enum class ScanStatus {
  Complete,  // frame_size bytes starting at input[0] are one whole reply
  NeedMore,  // call again with the same start and more bytes
  Error,     // the backend sent something that is not RESP: drop that connection
};

// Finds where one backend reply ends, for every type a Redis 7 server sends: RESP2
// (+ - : $ *) and RESP3 (_ , # ! = ( % ~ > |), nested to any depth. An attribute (`|`) is
// part of the reply that follows it. Like RequestParser it resumes on NeedMore without
// rescanning, so a reply of any size costs one pass.
class ReplyScanner {
 public:
  ScanStatus scan(std::string_view input, std::size_t& frame_size);

  // The type byte of the last complete frame's top-level value ('>' marks an out-of-band push).
  char frame_type() const { return frame_type_; }

  void reset();

 private:
  bool element_done();
  ScanStatus fail();

  std::size_t pos_ = 0;
  std::size_t line_scanned_ = 0;  // where the search for the current line's CR resumes
  // Elements still to read in each open aggregate, innermost last.
  std::vector<std::int64_t> pending_;
  std::int64_t bulk_remaining_ = -1;  // >= 0 while inside a bulk payload (incl. its CRLF)
  char frame_type_ = 0;
  char top_type_ = 0;  // type of the frame being scanned; 0 until its value (not attribute) starts
};

}  // namespace santral::protocol
