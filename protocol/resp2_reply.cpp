#include "protocol/resp2_reply.h"

#include <algorithm>
#include <vector>

#include "protocol/reply_encoder.h"
#include "protocol/reply_value.h"

namespace santral::protocol {
namespace {

using Type = ReplyValue::Type;

// Where Redis 7.0's RESP2 reply is not the RESP3 one type by type (src/t_list.c, t_zset.c,
// t_hash.c, t_stream.c, geo.c, multi.c: their `c->resp` tests and addReplyNullArray calls),
// measured against redis-server 7.0.15 in both protocols.
struct ShapeRule {
  std::string_view command;
  Resp2Shape shape;
  std::size_t from_args = 0;  // applies only with at least this many arguments (name included)
};

constexpr Resp2Shape kNullArray{'*', '$', false, false};
constexpr Resp2Shape kPairs{'$', '$', true, false};
constexpr ShapeRule kRules[] = {
    // Nothing to pop, a timeout, an aborted transaction: a null array.
    {"blmove", kNullArray},
    {"blmpop", kNullArray},
    {"blpop", kNullArray},
    {"brpop", kNullArray},
    {"brpoplpush", kNullArray},
    {"bzmpop", kNullArray},
    {"bzpopmax", kNullArray},
    {"bzpopmin", kNullArray},
    {"exec", kNullArray},
    {"geopos", {'$', '*', false, false}},  // a missing member: a null array in its place
    {"hrandfield", kPairs},
    {"lmpop", kNullArray},
    {"lpop", kNullArray, 3},  // with a count (LPOP key alone: a null bulk)
    {"rpop", kNullArray, 3},
    {"xread", {'*', '*', false, true}},  // a deleted entry's fields: a null array
    {"xreadgroup", {'*', '*', false, true}},
    {"zdiff", kPairs},
    {"zinter", kPairs},
    {"zmpop", kNullArray},
    {"zpopmax", kPairs},
    {"zpopmin", kPairs},
    {"zrandmember", kPairs},
    {"zrange", kPairs},
    {"zrangebyscore", kPairs},
    {"zrevrange", kPairs},
    {"zrevrangebyscore", kPairs},
    {"zunion", kPairs},
};

bool is_pair(const ReplyValue& value) {
  return value.type == Type::Array && value.elements.size() == 2;
}

// `value` and everything in it, type by type.
void retype(ReplyValue& value, const Resp2Shape& shape) {
  std::vector<ReplyValue*> pending{&value};
  bool top = true;
  while (!pending.empty()) {
    ReplyValue& node = *pending.back();
    pending.pop_back();
    switch (node.type) {
      case Type::Null:
        if (node.resp2_null == 0) node.resp2_null = top ? shape.null : shape.nested_null;
        break;
      case Type::Double:
      case Type::BigNumber:
        node.type = Type::BulkString;
        break;
      case Type::VerbatimString:  // "txt:..." (parse_reply checked the format)
        node.type = Type::BulkString;
        node.text.remove_prefix(std::min<std::size_t>(4, node.text.size()));
        break;
      case Type::Boolean:
        node.type = Type::Integer;
        node.text = {};
        break;
      case Type::BlobError:  // Redis sends none; RESP2 has one-line errors only
        node.type = Type::Error;
        node.text = node.text.substr(0, node.text.find_first_of("\r\n"));
        break;
      case Type::Map:
        if (top && shape.map_as_pairs) {
          std::vector<ReplyValue> pairs(node.elements.size() / 2);
          for (std::size_t i = 0; i < pairs.size(); ++i) {
            pairs[i].type = Type::Array;
            pairs[i].elements.push_back(std::move(node.elements[2 * i]));
            pairs[i].elements.push_back(std::move(node.elements[2 * i + 1]));
          }
          node.elements = std::move(pairs);
        }
        node.type = Type::Array;
        break;
      case Type::Set:
      case Type::Push:
        node.type = Type::Array;
        break;
      default:
        break;
    }
    if (top && shape.flat_pairs && node.type == Type::Array && !node.elements.empty() &&
        std::all_of(node.elements.begin(), node.elements.end(), is_pair)) {
      std::vector<ReplyValue> flat;
      flat.reserve(node.elements.size() * 2);
      for (auto& pair : node.elements)
        for (auto& element : pair.elements) flat.push_back(std::move(element));
      node.elements = std::move(flat);
    }
    top = false;
    for (auto& element : node.elements) pending.push_back(&element);
  }
}

}  // namespace

Resp2Shape resp2_shape(const CommandSpec& command, std::span<const std::string_view> args) {
  for (const auto& rule : kRules)
    if (rule.command == command.name && args.size() >= rule.from_args) return rule.shape;
  return {};
}

bool to_resp2(std::string_view frame, const Resp2Shape& shape, std::string& out) {
  ReplyValue value;
  if (!parse_reply(frame, value)) return false;
  retype(value, shape);
  encode_reply(value, out);
  return true;
}

}  // namespace santral::protocol
