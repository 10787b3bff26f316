#include "protocol/reply_value.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "protocol/reply_scanner.h"

using namespace santral::protocol;
using namespace std::string_literals;
using Type = ReplyValue::Type;

namespace {

ReplyValue decode(std::string_view frame) {
  ReplyValue value;
  INFO("frame " << frame);
  REQUIRE(parse_reply(frame, value));
  return value;
}

bool inside(std::string_view part, std::string_view frame) {
  return part.data() >= frame.data() && part.data() + part.size() <= frame.data() + frame.size();
}

}  // namespace

TEST_CASE("simple strings, errors and integers") {
  const ReplyValue ok = decode("+OK\r\n");
  CHECK(ok.type == Type::SimpleString);
  CHECK(ok.text == "OK");
  CHECK_FALSE(ok.is_error());

  const ReplyValue error = decode("-WRONGTYPE Operation against a key\r\n");
  CHECK(error.type == Type::Error);
  CHECK(error.text == "WRONGTYPE Operation against a key");
  CHECK(error.is_error());

  CHECK(decode(":-42\r\n").integer == -42);
  CHECK(decode(":0\r\n").type == Type::Integer);
  CHECK(decode(":9223372036854775807\r\n").integer == INT64_MAX);
  CHECK(decode(":-9223372036854775808\r\n").integer == INT64_MIN);
}

TEST_CASE("bulk strings are binary and may be empty") {
  const std::string frame = "$7\r\nhe\r\nl\0o\r\n"s;
  const ReplyValue bulk = decode(frame);
  CHECK(bulk.type == Type::BulkString);
  CHECK(bulk.text == "he\r\nl\0o"s);
  const ReplyValue empty = decode("$0\r\n\r\n");
  CHECK(empty.type == Type::BulkString);
  CHECK(empty.text.empty());
}

TEST_CASE("nulls remember the RESP2 type they came as") {
  const ReplyValue bulk = decode("$-1\r\n");
  CHECK(bulk.type == Type::Null);
  CHECK(bulk.resp2_null == '$');
  const ReplyValue array = decode("*-1\r\n");
  CHECK(array.type == Type::Null);
  CHECK(array.resp2_null == '*');
  const ReplyValue resp3 = decode("_\r\n");
  CHECK(resp3.type == Type::Null);
  CHECK(resp3.resp2_null == 0);
}

TEST_CASE("RESP3 scalars") {
  const ReplyValue pi = decode(",3.14159\r\n");
  CHECK(pi.type == Type::Double);
  CHECK(pi.text == "3.14159");
  CHECK(decode(",-inf\r\n").text == "-inf");

  const ReplyValue yes = decode("#t\r\n");
  CHECK(yes.type == Type::Boolean);
  CHECK(yes.integer == 1);
  const ReplyValue no = decode("#f\r\n");
  CHECK(no.type == Type::Boolean);
  CHECK(no.integer == 0);

  const ReplyValue blob_error = decode("!21\r\nSYNTAX invalid syntax\r\n");
  CHECK(blob_error.type == Type::BlobError);
  CHECK(blob_error.text == "SYNTAX invalid syntax");
  CHECK(blob_error.is_error());

  const ReplyValue verbatim = decode("=15\r\ntxt:Some string\r\n");
  CHECK(verbatim.type == Type::VerbatimString);
  CHECK(verbatim.text == "txt:Some string");

  const ReplyValue big = decode("(3492890328409238509324850943850943825024385\r\n");
  CHECK(big.type == Type::BigNumber);
  CHECK(big.text == "3492890328409238509324850943850943825024385");
}

TEST_CASE("arrays, sets and pushes hold their elements in order") {
  const ReplyValue array = decode("*4\r\n$3\r\nfoo\r\n:1\r\n$-1\r\n-ERR inner\r\n");
  CHECK(array.type == Type::Array);
  REQUIRE(array.elements.size() == 4);
  CHECK(array.elements[0].text == "foo");
  CHECK(array.elements[1].integer == 1);
  CHECK(array.elements[2].resp2_null == '$');
  CHECK(array.elements[3].is_error());

  const ReplyValue set = decode("~2\r\n+orange\r\n+apple\r\n");
  CHECK(set.type == Type::Set);
  REQUIRE(set.elements.size() == 2);
  CHECK(set.elements[1].text == "apple");

  const ReplyValue push = decode(">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n");
  CHECK(push.type == Type::Push);
  REQUIRE(push.elements.size() == 3);
  CHECK(push.elements[2].text == "hello");

  const ReplyValue none = decode("*0\r\n");
  CHECK(none.type == Type::Array);
  CHECK(none.elements.empty());
}

TEST_CASE("a map is stored flat: key, value, key, value") {
  const ReplyValue map = decode("%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n*2\r\n:2\r\n:3\r\n");
  CHECK(map.type == Type::Map);
  REQUIRE(map.elements.size() == 4);
  CHECK(map.elements[0].text == "first");
  CHECK(map.elements[1].integer == 1);
  CHECK(map.elements[2].text == "second");
  REQUIRE(map.elements[3].elements.size() == 2);
  CHECK(map.elements[3].elements[1].integer == 3);
  CHECK(decode("%0\r\n").elements.empty());
}

TEST_CASE("nested aggregates come back as a tree") {
  const ReplyValue scan = decode("*2\r\n$1\r\n0\r\n*3\r\n$1\r\na\r\n*0\r\n*1\r\n*1\r\n:9\r\n");
  REQUIRE(scan.elements.size() == 2);
  CHECK(scan.elements[0].text == "0");
  const ReplyValue& keys = scan.elements[1];
  REQUIRE(keys.elements.size() == 3);
  CHECK(keys.elements[0].text == "a");
  CHECK(keys.elements[1].type == Type::Array);
  CHECK(keys.elements[1].elements.empty());
  REQUIRE(keys.elements[2].elements.size() == 1);
  REQUIRE(keys.elements[2].elements[0].elements.size() == 1);
  CHECK(keys.elements[2].elements[0].elements[0].integer == 9);
}

TEST_CASE("deep nesting does not need deep recursion") {
  std::string frame;
  constexpr int depth = 1000;
  for (int i = 0; i < depth; ++i) frame += "*1\r\n";
  frame += ":7\r\n";
  const ReplyValue value = decode(frame);
  const ReplyValue* node = &value;
  for (int i = 0; i < depth; ++i) {
    REQUIRE(node->type == Type::Array);
    REQUIRE(node->elements.size() == 1);
    node = &node->elements[0];
  }
  CHECK(node->integer == 7);
}

TEST_CASE("attributes are skipped wherever they are") {
  SECTION("in front of the reply") {
    const ReplyValue value = decode(
        "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
        "*2\r\n:2039123\r\n:9543892\r\n");
    CHECK(value.type == Type::Array);
    REQUIRE(value.elements.size() == 2);
    CHECK(value.elements[0].integer == 2039123);
  }
  SECTION("in front of an element, and inside another attribute") {
    const ReplyValue value =
        decode("*2\r\n|1\r\n|1\r\n+x\r\n+y\r\n+ttl\r\n*1\r\n:1\r\n:3600\r\n|0\r\n$-1\r\n");
    REQUIRE(value.elements.size() == 2);
    CHECK(value.elements[0].integer == 3600);
    CHECK(value.elements[1].resp2_null == '$');
  }
}

TEST_CASE("text points into the frame") {
  const std::string frame = "*3\r\n+OK\r\n$3\r\nbar\r\n,1.5\r\n";
  const ReplyValue value = decode(frame);
  REQUIRE(value.elements.size() == 3);
  for (const ReplyValue& element : value.elements) CHECK(inside(element.text, frame));
  CHECK(value.elements[1].text.data() == frame.data() + 13);
}

TEST_CASE("a value that held something before is replaced whole") {
  ReplyValue value;
  REQUIRE(parse_reply("*2\r\n:1\r\n:2\r\n", value));
  REQUIRE(parse_reply("$-1\r\n", value));
  CHECK(value.type == Type::Null);
  CHECK(value.elements.empty());
  REQUIRE(parse_reply(":5\r\n", value));
  CHECK(value.resp2_null == 0);
}

TEST_CASE("malformed frames are refused") {
  for (std::string bad : {"",
                          "+OK",
                          "+OK\r",
                          "+OK\rX",
                          "\r\n",
                          "?\r\n",
                          ":\r\n",
                          ":abc\r\n",
                          ":1.5\r\n",
                          ":99999999999999999999\r\n",
                          "#x\r\n",
                          "#\r\n",
                          "#tt\r\n",
                          "_x\r\n",
                          "$3\r\nfoo",
                          "$3\r\nfooXY",
                          "$4\r\nfoo\r\n",
                          "$-2\r\n",
                          "$x\r\n",
                          "!-1\r\n",
                          "=3\r\ntxt\r\n",
                          "=5\r\ntxtab\r\n",
                          "*-2\r\n",
                          "~-1\r\n",
                          "*2\r\n:1\r\n",
                          "%1\r\n+k\r\n",
                          "*1000000\r\n:1\r\n",
                          "|1\r\n+k\r\n+v\r\n",
                          "|1\r\n+k\r\n",
                          "*1\r\n|1\r\n+k\r\n+v\r\n",
                          ":1\r\n:2\r\n",
                          "*1\r\n:1\r\nextra",
                          "*1\r\n@\r\n"}) {
    INFO("frame " << bad);
    ReplyValue value;
    CHECK_FALSE(parse_reply(bad, value));
  }
}

TEST_CASE("every frame the scanner delimits decodes") {
  const std::string stream =
      "+OK\r\n:1\r\n$-1\r\n*2\r\n$1\r\na\r\n_\r\n%1\r\n+k\r\n~1\r\n#t\r\n"
      "|1\r\n+a\r\n+b\r\n>2\r\n+message\r\n+hi\r\n=8\r\nmkd:*hi*\r\n!3\r\nERR\r\n";
  ReplyScanner scanner;
  std::string_view rest = stream;
  std::vector<Type> types;
  while (!rest.empty()) {
    std::size_t size = 0;
    REQUIRE(scanner.scan(rest, size) == ScanStatus::Complete);
    const ReplyValue value = decode(rest.substr(0, size));
    if (value.type == Type::Null && value.resp2_null != 0) {
      CHECK(value.resp2_null == scanner.frame_type());
    } else {
      CHECK(static_cast<char>(value.type) == scanner.frame_type());
    }
    types.push_back(value.type);
    rest.remove_prefix(size);
  }
  CHECK(types == std::vector<Type>{Type::SimpleString, Type::Integer, Type::Null, Type::Array,
                                   Type::Map, Type::Push, Type::VerbatimString, Type::BlobError});
}
