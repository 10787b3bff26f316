#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "router/merge/gathered/redis_numbers.h"

using namespace santral::router;

TEST_CASE("integers as Redis's string2ll reads them") {
  CHECK(redis_integer("0") == 0);
  CHECK(redis_integer("-7") == -7);
  CHECK(redis_integer("9223372036854775807") == INT64_MAX);
  CHECK(redis_integer("-9223372036854775808") == INT64_MIN);
  for (const char* not_one : {"", "-", "01", "-0", "+1", " 1", "1 ", "1.0", "9223372036854775808",
                              "-9223372036854775809", "123456789012345678901"})
    CHECK_FALSE(redis_integer(not_one).has_value());
}

TEST_CASE("doubles as Redis's getDoubleFromObject reads them") {
  CHECK(redis_double("1.5") == 1.5);
  CHECK(redis_double("inf") == INFINITY);
  CHECK(redis_double("-inf") == -INFINITY);
  CHECK(redis_double("0x10") == 16);
  CHECK(redis_double("1e3") == 1000);
  for (const char* not_one : {"", " 1", "1 ", "nan", "abc", "1e400", "1.5x"})
    CHECK_FALSE(redis_double(not_one).has_value());
}

TEST_CASE("doubles written as Redis 7.0's addReplyDouble") {
  std::string out;
  append_redis_double(out, 0.1, 2);
  CHECK(out == "$19\r\n0.10000000000000001\r\n");
  out.clear();
  append_redis_double(out, 2.5, 3);
  CHECK(out == ",2.5\r\n");
  out.clear();
  append_redis_double(out, -INFINITY, 2);
  CHECK(out == "$4\r\n-inf\r\n");
  out.clear();
  append_redis_double(out, INFINITY, 3);
  CHECK(out == ",inf\r\n");
}
