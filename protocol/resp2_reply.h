#pragma once

#include <span>
#include <string>
#include <string_view>

#include "protocol/command_table.h"

namespace santral::protocol {

// A RESP3 reply as Redis 7.0 would have sent it to a RESP2 client for the same command. Most of
// it is type by type: a map is a flat array of keys and values, a set an array, a double or a
// big number a bulk string of the same text, a boolean 1 or 0, a verbatim string a bulk string
// without its format. What the types alone do not say, the command does:
struct Resp2Shape {
  char null = '$';            // `_` as the whole reply: `$-1` (addReplyNull) or `*-1` (NullArray)
  char nested_null = '$';     // `_` inside the reply
  bool flat_pairs = false;    // [member, score] pairs (WITHSCORES) are one flat array in RESP2
  bool map_as_pairs = false;  // XREAD's map of streams is an array of [key, entries] pairs
};

// The shape of `command`'s reply, with its arguments (LPOP's null is an array with a count).
Resp2Shape resp2_shape(const CommandSpec& command, std::span<const std::string_view> args);

// Appends `frame` (one whole reply) to `out` as RESP2 in `shape`. A reply that is RESP2 already
// comes out unchanged. False when `frame` is not one well-formed reply (nothing appended).
bool to_resp2(std::string_view frame, const Resp2Shape& shape, std::string& out);

}  // namespace santral::protocol
