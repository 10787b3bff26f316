#include "tools/loadgen/request_encoder.h"

#include <fmt/format.h>

#include <iterator>

namespace santral::loadgen {

RequestEncoder::RequestEncoder(Command command, std::uint64_t keys, std::uint64_t seed)
    : command_(command), random_(seed), key_number_(0, keys - 1) {}

std::uint64_t RequestEncoder::append(std::string& out) {
  const auto key = key_number_(random_) % 1'000'000'000'000;  // 12 digits
  auto to = std::back_inserter(out);
  switch (command_) {
    case Command::Get:
      fmt::format_to(to, "*2\r\n$3\r\nGET\r\n$16\r\nkey:{:012}\r\n", key);
      break;
    case Command::Set:
      fmt::format_to(to, "*3\r\n$3\r\nSET\r\n$16\r\nkey:{:012}\r\n$3\r\nxxx\r\n", key);
      break;
    case Command::Incr:
      fmt::format_to(to, "*2\r\n$4\r\nINCR\r\n$16\r\nkey:{:012}\r\n", key);
      break;
  }
  return key;
}

}  // namespace santral::loadgen
