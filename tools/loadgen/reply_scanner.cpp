#include "tools/loadgen/reply_scanner.h"

#include <charconv>
#include <cstdint>

namespace santral::loadgen {
namespace {

constexpr int kMaxDepth = 8;  // nested arrays; the commands sent here reply with none

ScannedReply scan_at(std::string_view bytes, std::size_t pos, int depth) {
  if (pos >= bytes.size()) return {};
  const auto line_end = bytes.find("\r\n", pos + 1);
  if (line_end == std::string_view::npos) return {};
  const std::size_t after_line = line_end + 2;
  const char kind = bytes[pos];
  if (kind == '+' || kind == ':') return {ScanStatus::Complete, after_line - pos, false};
  if (kind == '-') return {ScanStatus::Complete, after_line - pos, true};
  if (kind != '$' && kind != '*') return {ScanStatus::Malformed};

  std::int64_t length = 0;
  const char* first = bytes.data() + pos + 1;
  const char* last = bytes.data() + line_end;
  const auto [end, ec] = std::from_chars(first, last, length);
  if (ec != std::errc{} || end != last || length < -1) return {ScanStatus::Malformed};
  if (length == -1) return {ScanStatus::Complete, after_line - pos, false};

  if (kind == '$') {
    const std::size_t reply_end = after_line + static_cast<std::size_t>(length) + 2;
    if (reply_end > bytes.size()) return {};
    if (bytes.substr(reply_end - 2, 2) != "\r\n") return {ScanStatus::Malformed};
    return {ScanStatus::Complete, reply_end - pos, false};
  }
  if (depth >= kMaxDepth) return {ScanStatus::Malformed};
  std::size_t at = after_line;
  bool error = false;
  for (std::int64_t i = 0; i < length; ++i) {
    const auto element = scan_at(bytes, at, depth + 1);
    if (element.status != ScanStatus::Complete) return element;
    at += element.size;
    error = error || element.error;
  }
  return {ScanStatus::Complete, at - pos, error};
}

}  // namespace

ScannedReply scan_reply(std::string_view bytes) {
  return scan_at(bytes, 0, 0);
}

}  // namespace santral::loadgen
