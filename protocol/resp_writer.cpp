#include "protocol/resp_writer.h"

#include <charconv>

namespace santral::protocol {
namespace {

void append_line(std::string& out, char type, std::int64_t number) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, number);
  out.push_back(type);
  out.append(digits, end);
  out.append("\r\n", 2);
}

}  // namespace

void RespWriter::simple(std::string_view text) {
  out_.push_back('+');
  out_.append(text);
  out_.append("\r\n", 2);
}

void RespWriter::error(std::string_view message) {
  out_.push_back('-');
  out_.append(message);
  out_.append("\r\n", 2);
}

void RespWriter::integer(std::int64_t value) {
  append_line(out_, ':', value);
}

void RespWriter::bulk(std::string_view value) {
  append_line(out_, '$', static_cast<std::int64_t>(value.size()));
  out_.append(value);
  out_.append("\r\n", 2);
}

void RespWriter::null_bulk() {
  out_.append("$-1\r\n", 5);
}

void RespWriter::array_header(std::size_t count) {
  append_line(out_, '*', static_cast<std::int64_t>(count));
}

void RespWriter::null_array() {
  out_.append("*-1\r\n", 5);
}

void RespWriter::null() {
  if (protocol_ == 3) {
    out_.append("_\r\n", 3);
  } else {
    null_bulk();
  }
}

void RespWriter::map_header(std::size_t pairs) {
  if (protocol_ == 3) {
    append_line(out_, '%', static_cast<std::int64_t>(pairs));
  } else {
    array_header(2 * pairs);
  }
}

void RespWriter::command(std::span<const std::string_view> args) {
  array_header(args.size());
  for (std::string_view arg : args) bulk(arg);
}

void RespWriter::fields(std::span<const Field> fields) {
  map_header(fields.size());
  for (const auto& field : fields) {
    bulk(field.name);
    if (const auto* text = std::get_if<std::string_view>(&field.value))
      bulk(*text);
    else
      integer(std::get<std::int64_t>(field.value));
  }
}

}  // namespace santral::protocol
