#pragma once

#include <string>

#include "protocol/request_parser.h"

namespace santral::router {

// What Redis answers to the malformed request `parser` stopped at, in its words (the
// connection is closed after it: the rest of the stream can't be trusted).
std::string protocol_error_message(const protocol::RequestParser& parser);

}  // namespace santral::router
