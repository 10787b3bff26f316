#include "router/tracking/own_writes.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using santral::router::OwnWrites;

TEST_CASE("BCAST NOLOOP: a key is the writer's own until each of its writes is heard") {
  OwnWrites own;
  std::vector<std::string> k{"user:1"};
  own.writing(7, k);
  own.writing(7, k);  // written twice before either fence came back
  CHECK(own.own(7, "user:1"));
  CHECK_FALSE(own.own(8, "user:1"));  // another client is told of 7's write
  CHECK_FALSE(own.own(7, "user:2"));
  own.heard(7, k, own.generation());
  CHECK(own.own(7, "user:1"));
  own.heard(7, k, own.generation());
  CHECK_FALSE(own.own(7, "user:1"));
  CHECK(own.empty());
  own.heard(7, k, own.generation());  // more fences than writes (the client turned off and on)
  CHECK(own.empty());
}

TEST_CASE("BCAST NOLOOP: a fence from before a lost broadcast connection undoes nothing") {
  OwnWrites own;
  std::vector<std::string> k{"a"};
  own.writing(1, k);
  auto before = own.generation();
  own.clear();
  CHECK_FALSE(own.own(1, "a"));
  own.writing(1, k);
  own.heard(1, k, before);
  CHECK(own.own(1, "a"));
  own.forget(1);  // the client closed
  CHECK(own.empty());
}
