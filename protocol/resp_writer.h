#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace santral::protocol {

// Appends RESP to a connection's output buffer. Everything a client or a backend receives
// from Santral that Santral composed itself (rather than forwarded) is written through here.
class RespWriter {
 public:
  // `protocol` is the client's RESP version: it decides how null() and map_header() look.
  explicit RespWriter(std::string& out, int protocol = 2) : out_(out), protocol_(protocol) {}

  void simple(std::string_view text);    // +text
  void error(std::string_view message);  // -message (message includes its ERR/prefix)
  void integer(std::int64_t value);      // :value
  void bulk(std::string_view value);     // $len value
  void null_bulk();                      // $-1
  void array_header(std::size_t count);  // *count
  void null_array();                     // *-1
  void null();                           // $-1, or _ in RESP3
  void map_header(std::size_t pairs);    // *2n, or %n in RESP3
  // One field of a map reply Santral composes (ROUTERS, ACL LOG, HOTKEYS, EXPLAIN): its name
  // and a text or a number.
  struct Field {
    std::string_view name;
    std::variant<std::string_view, std::int64_t> value;
  };
  // A map of `fields`, in their order.
  void fields(std::initializer_list<Field> fields) { this->fields(std::span(fields)); }
  void fields(std::span<const Field> fields);
  // A command as a multibulk array, as a backend expects it.
  void command(std::span<const std::string_view> args);

 private:
  std::string& out_;
  int protocol_;
};

}  // namespace santral::protocol
