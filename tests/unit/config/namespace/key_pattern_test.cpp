// config/namespace/key_pattern.cpp: compiling key patterns, matching whole keys, field values.
#include <catch2/catch.hpp>

#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "config/namespace/key_pattern.h"
#include "tests/support/namespace_fixtures.h"

using namespace santral::config;
using namespace santral::config::fixtures;

TEST_CASE("key patterns compile into literals and named fields") {
  std::string problem;
  auto p = KeyPattern::compile("order:{customer}:{id}", problem);
  REQUIRE(p);
  CHECK(p->field_count() == 2);
  REQUIRE(p->segments().size() == 4);
  CHECK_FALSE(p->segments()[0].field);
  CHECK(p->segments()[0].text == "order:");
  CHECK(p->segments()[1].field);
  CHECK(p->segments()[1].text == "customer");
  CHECK(p->field_index("customer") == 0);
  CHECK(p->field_index("id") == 1);
  CHECK(p->field_index("order") == -1);
  CHECK(p->leading_literal() == "order:");
  CHECK(p->sample_key('#') == "order:#:#");
  CHECK(p->text() == "order:{customer}:{id}");

  auto lead = KeyPattern::compile("{region}/{id}", problem);
  REQUIRE(lead);
  CHECK(lead->leading_literal().empty());

  auto literal = KeyPattern::compile("config", problem);
  REQUIRE(literal);
  CHECK(literal->field_count() == 0);
  CHECK(literal->match("config"));
  CHECK_FALSE(literal->match("config2"));
  CHECK_FALSE(literal->match("confi"));
  CHECK(literal->fields("config") == std::vector<std::string_view>{});
  CHECK_FALSE(literal->fields("other"));
}

TEST_CASE("malformed key patterns are rejected with the reason") {
  struct Case {
    std::string pattern, says;
  };
  const Case cases[] = {
      {"order:{customer", "without a closing '}'"},
      {"order:customer}", "'}' without a '{'"},
      {"order:{}", "a field needs a name"},
      {"order:{cust omer}", "may use only letters, digits"},
      {"order:{a.b}", "may use only letters, digits"},
      {"order:{a}{b}", "must be separated by literal text"},
      {"{a}:{a}", "appears twice"},
      {"", "must not be empty"},
  };
  for (const auto& c : cases) {
    INFO(c.pattern);
    std::string problem;
    CHECK_FALSE(KeyPattern::compile(c.pattern, problem));
    CHECK_THAT(problem, Catch::Contains(c.says));
  }
  std::string problem;
  CHECK(KeyPattern::compile("a:{x_1-Y}", problem));
}

TEST_CASE("key patterns match whole keys; fields take one or more characters") {
  std::string problem;
  auto p = KeyPattern::compile("order:{customer}:{id}", problem).value();
  auto fields = p.fields("order:c1:17");
  REQUIRE(fields);
  CHECK((*fields)[0] == "c1");
  CHECK((*fields)[1] == "17");
  // The first field stops at the first ':' after it; the final one takes the rest.
  fields = p.fields("order:c1:17:extra");
  REQUIRE(fields);
  CHECK((*fields)[0] == "c1");
  CHECK((*fields)[1] == "17:extra");
  // A field may contain its next literal's text when it starts there (one character minimum).
  fields = p.fields("order::x:y");
  REQUIRE(fields);
  CHECK((*fields)[0] == ":x");
  CHECK((*fields)[1] == "y");
  std::string_view value;
  CHECK(p.match("order:c1:17", 1, &value));
  CHECK(value == "17");
  CHECK_FALSE(p.match("order:c1:"));  // empty final field
  CHECK_FALSE(p.match("order::"));
  CHECK_FALSE(p.match("order:c1"));
  CHECK_FALSE(p.match("orders:c1:17"));
  CHECK_FALSE(p.match("xorder:c1:17"));
  CHECK_FALSE(p.fields("order:c1"));

  auto tail = KeyPattern::compile("user:{id}:profile", problem).value();
  CHECK(tail.match("user:1:profile"));
  CHECK(tail.match("user:1:profile:profile"));  // id = "1:profile"
  CHECK(tail.fields("user:1:profile:profile").value()[0] == "1:profile");
  CHECK_FALSE(tail.match("user::profile"));
  CHECK_FALSE(tail.match("user:1:profile2"));
  CHECK_FALSE(tail.match("user:profile"));

  auto any = KeyPattern::compile("{key}", problem).value();
  CHECK(any.match("x"));
  CHECK(any.match(std::string("\0\xff", 2)));
  CHECK_FALSE(any.match(""));
}

TEST_CASE("key pattern matching agrees with the regular expression it stands for") {
  // A field is (.+?), a final field (.+); the whole key must match. The pattern claims linear
  // matching without backtracking gives the same answer and the same field values.
  std::mt19937 rng(4242);
  const std::string literal_chars = "ab:";
  int matched = 0;
  for (int round = 0; round < 400; ++round) {
    std::string pattern;
    std::string regex_text;
    int fields = 0;
    bool last_field = false;
    int parts = std::uniform_int_distribution<int>(1, 5)(rng);
    for (int i = 0; i < parts; ++i) {
      bool field = !last_field && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      if (field) {
        pattern += "{f" + std::to_string(fields++) + "}";
        regex_text += i + 1 == parts ? "(.+)" : "(.+?)";
      } else {
        std::string lit = random_text(rng, literal_chars, 2, 1);
        pattern += lit;
        for (char c : lit) regex_text += c == ':' ? std::string(":") : std::string(1, c);
      }
      last_field = field;
    }
    std::string problem;
    auto compiled = KeyPattern::compile(pattern, problem);
    REQUIRE(compiled);
    std::regex re(regex_text);
    for (int k = 0; k < 60; ++k) {
      std::string key = random_text(rng, "ab:x", 9);
      INFO("pattern " << pattern << " regex " << regex_text << " key " << key);
      std::smatch m;
      bool want = std::regex_match(key, m, re);
      auto got = compiled->fields(key);
      REQUIRE(got.has_value() == want);
      REQUIRE(compiled->match(key) == want);
      if (!want) continue;
      ++matched;
      for (int f = 0; f < fields; ++f) REQUIRE(std::string((*got)[f]) == m[f + 1].str());
    }
  }
  CHECK(matched > 1000);  // the comparison was not vacuous
}
