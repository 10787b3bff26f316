#pragma once

#include <string>

#include "protocol/reply_value.h"

namespace santral::protocol {

// Appends `value` to `out` as RESP, byte for byte as parse_reply() read it: each value keeps
// its own type (a RESP2 null stays `$-1` or `*-1`, a RESP3 null stays `_`, doubles and big
// numbers keep their text). Attributes are not kept, as parse_reply() drops them.
void encode_reply(const ReplyValue& value, std::string& out);

}  // namespace santral::protocol
