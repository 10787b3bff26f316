#include "router/session/protocol_error_message.h"

#include "protocol/errors.h"

namespace santral::router {

std::string protocol_error_message(const protocol::RequestParser& parser) {
  using protocol::ClientError;
  using protocol::error_message;
  using protocol::ProtocolError;
  const auto& limits = parser.limits();
  switch (parser.error()) {
    case ProtocolError::InvalidMultibulkLength:
      return error_message(ClientError::InvalidMultibulkLength);
    case ProtocolError::TooManyArguments:
      return error_message(ClientError::TooManyArguments, parser.announced(), limits.max_args);
    case ProtocolError::InvalidBulkLength:
      return error_message(ClientError::InvalidBulkLength);
    case ProtocolError::BulkTooLarge:
      return error_message(ClientError::BulkTooLarge, parser.announced(), limits.max_bulk_bytes);
    case ProtocolError::ExpectedDollar: {
      // Redis prints a space in place of a CR or LF here.
      char got = parser.unexpected_byte();
      return error_message(ClientError::ExpectedDollar, got == '\r' || got == '\n' ? ' ' : got);
    }
    case ProtocolError::TooBigCountString:
      return error_message(ClientError::TooBigCountString);
    case ProtocolError::TooBigBulkCountString:
      return error_message(ClientError::TooBigBulkCountString);
    case ProtocolError::TooBigInline:
      return error_message(ClientError::TooBigInline, limits.max_inline_bytes);
    case ProtocolError::UnbalancedQuotes:
    case ProtocolError::None:
      break;
  }
  return error_message(ClientError::UnbalancedQuotes);
}

}  // namespace santral::router
